// SPDX-License-Identifier: GPL-2.0
/*
 * A software PCI root bus carrying one ConnectX-6 Dx function per port
 * (15b3:101d, class Ethernet), so that /sys/class/net/<if>/device is a PCI
 * function as on a real host: "0000:BB:SS.F", subsystem pci, vendor 0x15b3.
 * Ports 2k and 2k+1 are functions 0 and 1 of slot k, like a dual-port NIC.
 * Config space is emulated in memory: no BARs, no interrupts, and one
 * capability, PCI Express.  A PCI driver (named like ethtool's driver,
 * mlx5_core) binds to these functions only, so device/driver resolves too.
 *
 * PCI Express: a v2 Endpoint capability at 0x60 (where ConnectX puts it) with
 * LNKCAP 16 GT/s x16, LNKCAP2 supported speeds 2.5-16 GT/s (5.10's and 6.x's
 * pcie_get_speed_cap() read max_link_speed from LNKCAP2 when it is non-zero;
 * LNKCAP's SLS alone would read "Unknown" for Gen4 on 5.10) and LNKSTA as
 * trained, by default 16 GT/s x16.  The PCI core itself then shows
 * current_link_speed/width and max_link_speed/width (pci-sysfs.c
 * pcie_dev_attrs, visible for pci_is_pcie()) and formats them as on real
 * hardware.  "pcie_link <GT/s> <width>" retrains the slot's link: both
 * functions of a NIC share one link, so it changes both.  What else the
 * capability makes the core do, checked on 5.10, 6.1 and 6.12: it probes the
 * extended config space at 0x100, which this bus refuses
 * (PCIBIOS_DEVICE_NOT_FOUND), so the config space stays 256 bytes and
 * pci_find_ext_capability() finds nothing; MPS, ASPM and the port services
 * want an upstream bridge, which a function on a root bus has not; DEVCAP,
 * DEVCAP2 and LNKCAP advertise nothing the core would enable (no extended
 * tags, LTR, ASPM); writes to the capability are dropped like every write but
 * the command register.  No BAR is read or sized.
 *
 * AER: the kernel counts AER errors (aer_dev_correctable, aer_dev_nonfatal,
 * aer_dev_fatal) only for a function with the AER extended capability, which
 * needs the 4096-byte config space, and moves them only when the AER service
 * of a root port above takes the error interrupt (or a firmware-first CPER
 * record arrives): neither exists on this root bus, so a real AER capability
 * would show three files stuck at 0.  Like SR-IOV below, the bound driver
 * adds the three attributes itself (the kernel's own are invisible without
 * pdev->aer_stats), in aer.c's exact format: one "<name> <count>" line per
 * named error bit, in bit order, then "TOTAL_ERR_COR|ERR_NONFATAL|ERR_FATAL
 * <count>".  The names are those of the kernels the testbed boots (5.10.262,
 * 6.1.192, 6.12.95: all carry the PCIe r6.0 uncorrectable names of bits
 * 27-31, backported to stable in 2025).  "aer <class> <bit name> [count]"
 * counts errors, as aer_print_error() -> pci_dev_aer_stats_incr() does for
 * one error message with one status bit.
 *
 * SR-IOV: the kernel shows sriov_numvfs/sriov_totalvfs only on a function with
 * the SR-IOV extended capability, which needs PCIe config space and VF BARs
 * this bus does not have.  The bound driver adds the same two attributes
 * itself, with the kernel's semantics (numvfs <= totalvfs; changing a non-zero
 * count needs a 0 first, else EBUSY), so /sys/class/net/<if>/device/sriov_numvfs
 * reads and writes as on a real PF.  No VF functions appear.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "simnic.h"

#define SIMNIC_PCI_DEVICE_ID 0x101d /* ConnectX-6 Dx */
#define SIMNIC_PCI_SUBSYS_ID 0x0016
#define SIMNIC_FIRST_BUS 0x3b
#define SIMNIC_PCIE_CAP 0x60 /* as on ConnectX: "Capabilities: [60] Express" */
#define SIMNIC_MAX_LANES 16
#define SIMNIC_AER_CLASSES 3 /* correctable, nonfatal, fatal */
#define SIMNIC_AER_BITS 32
/*
 * GPUs: "gpus=N" adds N NVIDIA A100 functions (10de:20b0, class 0x0302 3D
 * controller, as lspci shows an SXM4 A100) in slots 16 and up of the same
 * root bus: no capability, no BAR, no driver.  They are what the exporter's
 * GPU topology (docs/gpus.md) lists from sysfs: vendor, class, numa_node and
 * the device path.  All on one host bridge with no switch, each GPU is PHB
 * from each port, as on a server whose GPUs and NICs hang from the root
 * ports of one root complex.
 */
#define SIMNIC_GPU_FIRST_SLOT 16
#define SIMNIC_MAX_GPUS 8
#define SIMNIC_GPU_VENDOR_ID 0x10de
#define SIMNIC_GPU_DEVICE_ID 0x20b0
#define SIMNIC_GPU_SUBSYS_ID 0x134f
#define SIMNIC_GPU_HEADER 64 /* the type 0 header; the rest reads 0 */

static unsigned int simnic_gpus;
module_param_named(gpus, simnic_gpus, uint, 0444);
MODULE_PARM_DESC(gpus, "NVIDIA GPU functions (10de:20b0, no driver) on the simulated PCI bus, in slots 16 and up (0-8, default 0)");

static struct {
	struct pci_sysdata sd; /* bus->sysdata: x86 reads domain/node here */
	struct pci_bus *bus;
	struct resource busn;
	spinlock_t lock;
	u8 cfg[SIMNIC_MAX_PORTS][PCI_CFG_SPACE_SIZE];
	u8 gpu_cfg[SIMNIC_MAX_GPUS][SIMNIC_GPU_HEADER];
	u16 num_vfs[SIMNIC_MAX_PORTS];
	bool driver_registered;
	/* aer.c's dev_cor_errs, dev_nonfatal_errs, dev_fatal_errs and totals */
	u64 aer[SIMNIC_MAX_PORTS][SIMNIC_AER_CLASSES][SIMNIC_AER_BITS];
	u64 aer_total[SIMNIC_MAX_PORTS][SIMNIC_AER_CLASSES];
} sp;

#define SIMNIC_TOTAL_VFS 8 /* a ConnectX PF as firmware often configures it */

static int port_of(unsigned int devfn)
{
	int port = PCI_SLOT(devfn) * 2 + PCI_FUNC(devfn);

	if (PCI_FUNC(devfn) > 1 || port >= simnic_num_ports)
		return -1;
	return port;
}

static int gpu_of(unsigned int devfn)
{
	int gpu = (int)PCI_SLOT(devfn) - SIMNIC_GPU_FIRST_SLOT;

	if (PCI_FUNC(devfn) || gpu < 0 || gpu >= min_t(int, simnic_gpus, SIMNIC_MAX_GPUS))
		return -1;
	return gpu;
}

/* Read-only: the header is constant, so no lock. */
static u32 gpu_cfg_read(int gpu, int where, int size)
{
	u32 v = 0;
	int i;

	for (i = 0; i < size; i++)
		if (where + i < SIMNIC_GPU_HEADER)
			v |= (u32)sp.gpu_cfg[gpu][where + i] << (8 * i);
	return v;
}

static int cfg_read(struct pci_bus *bus, unsigned int devfn, int where,
		    int size, u32 *val)
{
	int port = port_of(devfn);
	int gpu = gpu_of(devfn);
	unsigned long flags;
	u32 v = 0;
	int i;

	if (gpu >= 0 && where + size <= PCI_CFG_SPACE_SIZE) {
		*val = gpu_cfg_read(gpu, where, size);
		return PCIBIOS_SUCCESSFUL;
	}
	if (port < 0 || where + size > PCI_CFG_SPACE_SIZE) {
		*val = ~0U;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	spin_lock_irqsave(&sp.lock, flags);
	for (i = 0; i < size; i++)
		v |= (u32)sp.cfg[port][where + i] << (8 * i);
	spin_unlock_irqrestore(&sp.lock, flags);
	*val = v;
	return PCIBIOS_SUCCESSFUL;
}

/* Only the command register is writable; BAR sizing reads back 0 (no BAR). */
static int cfg_write(struct pci_bus *bus, unsigned int devfn, int where,
		     int size, u32 val)
{
	int port = port_of(devfn);
	unsigned long flags;
	int i;

	if (gpu_of(devfn) >= 0 && where + size <= PCI_CFG_SPACE_SIZE)
		return PCIBIOS_SUCCESSFUL; /* a GPU's writes are dropped */
	if (port < 0 || where + size > PCI_CFG_SPACE_SIZE)
		return PCIBIOS_DEVICE_NOT_FOUND;
	spin_lock_irqsave(&sp.lock, flags);
	for (i = 0; i < size; i++)
		if (where + i == PCI_COMMAND || where + i == PCI_COMMAND + 1)
			sp.cfg[port][where + i] = val >> (8 * i);
	spin_unlock_irqrestore(&sp.lock, flags);
	return PCIBIOS_SUCCESSFUL;
}

static struct pci_ops simnic_pci_ops = {
	.read = cfg_read,
	.write = cfg_write,
};

static void fill_gpu_cfg(int gpu)
{
	u8 *c = sp.gpu_cfg[gpu];

	*(__le16 *)(c + PCI_VENDOR_ID) = cpu_to_le16(SIMNIC_GPU_VENDOR_ID);
	*(__le16 *)(c + PCI_DEVICE_ID) = cpu_to_le16(SIMNIC_GPU_DEVICE_ID);
	c[PCI_REVISION_ID] = 0xa1;
	*(__le16 *)(c + PCI_CLASS_DEVICE) = cpu_to_le16(PCI_CLASS_DISPLAY_3D);
	c[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
	*(__le16 *)(c + PCI_SUBSYSTEM_VENDOR_ID) = cpu_to_le16(SIMNIC_GPU_VENDOR_ID);
	*(__le16 *)(c + PCI_SUBSYSTEM_ID) = cpu_to_le16(SIMNIC_GPU_SUBSYS_ID);
}

static void fill_cfg(int port)
{
	u8 *c = sp.cfg[port];
	bool multifunction = (port & 1) == 0 && port + 1 < simnic_num_ports;

	memset(c, 0, PCI_CFG_SPACE_SIZE);
	*(__le16 *)(c + PCI_VENDOR_ID) = cpu_to_le16(PCI_VENDOR_ID_MELLANOX);
	*(__le16 *)(c + PCI_DEVICE_ID) = cpu_to_le16(SIMNIC_PCI_DEVICE_ID);
	c[PCI_CLASS_PROG] = 0;
	*(__le16 *)(c + PCI_CLASS_DEVICE) = cpu_to_le16(PCI_CLASS_NETWORK_ETHERNET);
	c[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL | (multifunction ? 0x80 : 0);
	*(__le16 *)(c + PCI_SUBSYSTEM_VENDOR_ID) = cpu_to_le16(PCI_VENDOR_ID_MELLANOX);
	*(__le16 *)(c + PCI_SUBSYSTEM_ID) = cpu_to_le16(SIMNIC_PCI_SUBSYS_ID);

	*(__le16 *)(c + PCI_STATUS) = cpu_to_le16(PCI_STATUS_CAP_LIST);
	c[PCI_CAPABILITY_LIST] = SIMNIC_PCIE_CAP;
	c = sp.cfg[port] + SIMNIC_PCIE_CAP;
	c[PCI_CAP_LIST_ID] = PCI_CAP_ID_EXP;
	c[PCI_CAP_LIST_NEXT] = 0;
	/* version 2: LNKCAP2/LNKCTL2 are implemented (pcie_cap_version() > 1) */
	*(__le16 *)(c + PCI_EXP_FLAGS) =
		cpu_to_le16(2 | PCI_EXP_TYPE_ENDPOINT << 4);
	*(__le32 *)(c + PCI_EXP_DEVCAP) = cpu_to_le32(2); /* MPS 512 bytes */
	*(__le32 *)(c + PCI_EXP_LNKCAP) =
		cpu_to_le32(PCI_EXP_LNKCAP_SLS_16_0GB | SIMNIC_MAX_LANES << 4);
	*(__le32 *)(c + PCI_EXP_LNKCAP2) =
		cpu_to_le32(PCI_EXP_LNKCAP2_SLS_2_5GB | PCI_EXP_LNKCAP2_SLS_5_0GB |
			    PCI_EXP_LNKCAP2_SLS_8_0GB | PCI_EXP_LNKCAP2_SLS_16_0GB);
	*(__le16 *)(c + PCI_EXP_LNKCTL2) = cpu_to_le16(PCI_EXP_LNKCTL2_TLS_16_0GT);
	*(__le16 *)(c + PCI_EXP_LNKSTA) = cpu_to_le16(
		PCI_EXP_LNKSTA_CLS_16_0GB | SIMNIC_MAX_LANES << PCI_EXP_LNKSTA_NLW_SHIFT);
}

/*
 * pcie_link <GT/s> <lanes>: the link of port's slot (both functions) trains
 * at that speed and width, at most LNKCAP's 16 GT/s x16.
 */
static int pcie_link_set(int port, const char *speed, const char *width,
			 bool apply, char *err, size_t errlen)
{
	static const char *const speeds[] = { NULL, "2.5", "5", "8", "16" };
	unsigned long flags;
	unsigned int cls, lanes;
	int p;

	for (cls = 1; cls < ARRAY_SIZE(speeds); cls++)
		if (!strcmp(speed, speeds[cls]))
			break;
	if (cls == ARRAY_SIZE(speeds)) {
		snprintf(err, errlen, "pcie_link: speed '%s' is not 2.5, 5, 8 or 16 (GT/s)", speed);
		return -EINVAL;
	}
	if (kstrtouint(width, 0, &lanes) || !lanes || lanes > SIMNIC_MAX_LANES ||
	    (lanes & (lanes - 1))) {
		snprintf(err, errlen, "pcie_link: width '%s' is not 1, 2, 4, 8 or 16", width);
		return -EINVAL;
	}
	if (!apply)
		return 0;
	spin_lock_irqsave(&sp.lock, flags);
	for (p = port & ~1; p <= (port | 1) && p < simnic_num_ports; p++)
		*(__le16 *)(sp.cfg[p] + SIMNIC_PCIE_CAP + PCI_EXP_LNKSTA) =
			cpu_to_le16(cls | lanes << PCI_EXP_LNKSTA_NLW_SHIFT);
	spin_unlock_irqrestore(&sp.lock, flags);
	return 0;
}

/*
 * drivers/pci/pcie/aer.c aer_correctable_error_string[] and
 * aer_uncorrectable_error_string[] of the testbed's kernels; NULL bits print
 * only when they counted, as "dev_cor_errs_bit[%d] %llu" (never here).
 */
static const char *const aer_cor_names[16] = {
	[0] = "RxErr",	     [6] = "BadTLP",	  [7] = "BadDLLP",
	[8] = "Rollover",    [12] = "Timeout",	  [13] = "NonFatalErr",
	[14] = "CorrIntErr", [15] = "HeaderOF",
};
static const char *const aer_uncor_names[SIMNIC_AER_BITS] = {
	[0] = "Undefined",	   [4] = "DLP",
	[5] = "SDES",		   [12] = "TLP",
	[13] = "FCP",		   [14] = "CmpltTO",
	[15] = "CmpltAbrt",	   [16] = "UnxCmplt",
	[17] = "RxOF",		   [18] = "MalfTLP",
	[19] = "ECRC",		   [20] = "UnsupReq",
	[21] = "ACSViol",	   [22] = "UncorrIntErr",
	[23] = "BlockedTLP",	   [24] = "AtomicOpBlocked",
	[25] = "TLPBlockedErr",	   [26] = "PoisonTLPBlocked",
	[27] = "DMWrReqBlocked",   [28] = "IDECheck",
	[29] = "MisIDETLP",	   [30] = "PCRC_CHECK",
	[31] = "TLPXlatBlocked",
};
static const char *const aer_class_names[SIMNIC_AER_CLASSES] = {
	"correctable", "nonfatal", "fatal"
};
static const char *const aer_totals[SIMNIC_AER_CLASSES] = {
	"ERR_COR", "ERR_NONFATAL", "ERR_FATAL"
};

static int aer_bits(int class)
{
	return class == 0 ? ARRAY_SIZE(aer_cor_names) : ARRAY_SIZE(aer_uncor_names);
}

static const char *aer_name(int class, int bit)
{
	return class == 0 ? aer_cor_names[bit] : aer_uncor_names[bit];
}

/* aer <correctable|nonfatal|fatal> <bit name> [count]: count error messages */
static int aer_add(int port, int argc, char **argv, bool apply, char *err,
		   size_t errlen)
{
	unsigned long flags;
	int class, bit;
	u64 n = 1;

	if (argc < 3 || argc > 4) {
		snprintf(err, errlen, "usage: aer correctable|nonfatal|fatal <error bit name> [count]");
		return -EINVAL;
	}
	for (class = 0; class < SIMNIC_AER_CLASSES; class++)
		if (!strcmp(argv[1], aer_class_names[class]))
			break;
	if (class == SIMNIC_AER_CLASSES) {
		snprintf(err, errlen, "aer: '%s' is not correctable, nonfatal or fatal", argv[1]);
		return -EINVAL;
	}
	for (bit = 0; bit < aer_bits(class); bit++)
		if (aer_name(class, bit) && !strcmp(argv[2], aer_name(class, bit)))
			break;
	if (bit == aer_bits(class)) {
		snprintf(err, errlen, "aer: no %s error bit '%s'", argv[1], argv[2]);
		return -EINVAL;
	}
	if (argc == 4 && (kstrtou64(argv[3], 0, &n) || n > U32_MAX)) {
		snprintf(err, errlen, "aer: bad count '%s'", argv[3]);
		return -EINVAL;
	}
	if (!apply)
		return 0;
	spin_lock_irqsave(&sp.lock, flags);
	sp.aer[port][class][bit] += n;
	sp.aer_total[port][class] += n;
	spin_unlock_irqrestore(&sp.lock, flags);
	return 0;
}

/* PCIe commands of the control file; -ENOENT: not one of them. */
int simnic_pci_ctl(int port, int argc, char **argv, bool apply, char *err,
		   size_t errlen)
{
	if (!strcmp(argv[0], "pcie_link")) {
		if (argc != 3) {
			snprintf(err, errlen, "usage: pcie_link <GT/s> <width>");
			return -EINVAL;
		}
		return pcie_link_set(port, argv[1], argv[2], apply, err, errlen);
	}
	if (!strcmp(argv[0], "aer"))
		return aer_add(port, argc, argv, apply, err, errlen);
	return -ENOENT;
}

/* aer.c aer_stats_dev_attr(): the named bits in order, then the total */
static ssize_t aer_show(struct device *dev, char *buf, int class)
{
	int port = port_of(to_pci_dev(dev)->devfn);
	unsigned long flags;
	size_t len = 0;
	int bit;

	if (port < 0)
		return -ENODEV;
	spin_lock_irqsave(&sp.lock, flags);
	for (bit = 0; bit < aer_bits(class); bit++) {
		if (aer_name(class, bit))
			len += sysfs_emit_at(buf, len, "%s %llu\n", aer_name(class, bit),
					     sp.aer[port][class][bit]);
		else if (sp.aer[port][class][bit])
			len += sysfs_emit_at(buf, len, "%s_bit[%d] %llu\n",
					     class == 0 ? "dev_cor_errs" :
					     class == 1 ? "dev_nonfatal_errs" :
							  "dev_fatal_errs",
					     bit, sp.aer[port][class][bit]);
	}
	len += sysfs_emit_at(buf, len, "TOTAL_%s %llu\n", aer_totals[class],
			     sp.aer_total[port][class]);
	spin_unlock_irqrestore(&sp.lock, flags);
	return len;
}

static ssize_t aer_dev_correctable_show(struct device *dev,
					struct device_attribute *attr, char *buf)
{
	return aer_show(dev, buf, 0);
}
static DEVICE_ATTR_RO(aer_dev_correctable);

static ssize_t aer_dev_nonfatal_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return aer_show(dev, buf, 1);
}
static DEVICE_ATTR_RO(aer_dev_nonfatal);

static ssize_t aer_dev_fatal_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return aer_show(dev, buf, 2);
}
static DEVICE_ATTR_RO(aer_dev_fatal);

static struct attribute *simnic_pci_attrs[] = {
	&dev_attr_aer_dev_correctable.attr,
	&dev_attr_aer_dev_fatal.attr,
	&dev_attr_aer_dev_nonfatal.attr,
	NULL,
};
static const struct attribute_group simnic_pci_group = {
	.attrs = simnic_pci_attrs,
};

static ssize_t sriov_totalvfs_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SIMNIC_TOTAL_VFS);
}
static DEVICE_ATTR_RO(sriov_totalvfs);

static ssize_t sriov_numvfs_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	int port = port_of(to_pci_dev(dev)->devfn);

	return sysfs_emit(buf, "%u\n", port < 0 ? 0 : READ_ONCE(sp.num_vfs[port]));
}

/* drivers/pci/iov.c sriov_numvfs_store: range, then 0 before another count */
static ssize_t sriov_numvfs_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	int port = port_of(to_pci_dev(dev)->devfn);
	u16 num_vfs;
	int ret;

	if (port < 0)
		return -ENODEV;
	ret = kstrtou16(buf, 0, &num_vfs);
	if (ret < 0)
		return ret;
	if (num_vfs > SIMNIC_TOTAL_VFS)
		return -ERANGE;
	if (num_vfs && READ_ONCE(sp.num_vfs[port]) && num_vfs != sp.num_vfs[port])
		return -EBUSY;
	WRITE_ONCE(sp.num_vfs[port], num_vfs);
	return count;
}
static DEVICE_ATTR_RW(sriov_numvfs);

static int simnic_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	/* never claim a real ConnectX */
	if (pdev->bus != sp.bus)
		return -ENODEV;
	ret = device_create_file(&pdev->dev, &dev_attr_sriov_totalvfs);
	if (!ret)
		ret = device_create_file(&pdev->dev, &dev_attr_sriov_numvfs);
	if (!ret)
		ret = sysfs_create_group(&pdev->dev.kobj, &simnic_pci_group);
	if (ret) { /* remove() is not called after a failed probe */
		device_remove_file(&pdev->dev, &dev_attr_sriov_numvfs);
		device_remove_file(&pdev->dev, &dev_attr_sriov_totalvfs);
	}
	return ret;
}

static void simnic_pci_remove(struct pci_dev *pdev)
{
	sysfs_remove_group(&pdev->dev.kobj, &simnic_pci_group);
	device_remove_file(&pdev->dev, &dev_attr_sriov_numvfs);
	device_remove_file(&pdev->dev, &dev_attr_sriov_totalvfs);
}

static const struct pci_device_id simnic_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_MELLANOX, SIMNIC_PCI_DEVICE_ID) },
	{}
};

static struct pci_driver simnic_pci_driver = {
	.id_table = simnic_pci_ids,
	.probe = simnic_pci_probe,
	.remove = simnic_pci_remove,
};

/* Creates the bus and its functions; returns 0 or an error (then no PCI). */
int simnic_pci_init(void)
{
	LIST_HEAD(resources);
	int nr, port;

	spin_lock_init(&sp.lock);
	for (port = 0; port < simnic_num_ports; port++)
		fill_cfg(port);
	for (port = 0; port < min_t(int, simnic_gpus, SIMNIC_MAX_GPUS); port++)
		fill_gpu_cfg(port);

	for (nr = SIMNIC_FIRST_BUS; nr <= 0xff; nr++)
		if (!pci_find_bus(0, nr))
			break;
	if (nr > 0xff)
		return -EBUSY;

	sp.sd.domain = 0;
	sp.sd.node = NUMA_NO_NODE;
	sp.busn.name = "simnic";
	sp.busn.start = nr;
	sp.busn.end = nr;
	sp.busn.flags = IORESOURCE_BUS;
	pci_add_resource(&resources, &sp.busn);

	pci_lock_rescan_remove();
	sp.bus = pci_create_root_bus(NULL, nr, &simnic_pci_ops, &sp.sd,
				     &resources);
	if (!sp.bus) {
		pci_unlock_rescan_remove();
		pci_free_resource_list(&resources);
		return -ENODEV;
	}
	pci_scan_child_bus(sp.bus);
	pci_bus_add_devices(sp.bus);
	pci_unlock_rescan_remove();

	simnic_pci_driver.name = simnic_drv_name;
	/* a real mlx5_core already registered keeps its name: stay unbound */
	sp.driver_registered = !pci_register_driver(&simnic_pci_driver);
	return 0;
}

/* The PCI function of a port, with a reference; NULL without the bus. */
struct pci_dev *simnic_pci_dev(int port)
{
	if (!sp.bus)
		return NULL;
	return pci_get_slot(sp.bus, PCI_DEVFN(port / 2, port % 2));
}

void simnic_pci_exit(void)
{
	if (sp.driver_registered)
		pci_unregister_driver(&simnic_pci_driver);
	sp.driver_registered = false;
	if (!sp.bus)
		return;
	pci_lock_rescan_remove();
	pci_stop_root_bus(sp.bus);
	pci_remove_root_bus(sp.bus);
	pci_unlock_rescan_remove();
	sp.bus = NULL;
}
