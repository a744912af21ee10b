// SPDX-License-Identifier: GPL-2.0
/*
 * A software PCI root bus carrying one ConnectX-6 Dx function per port
 * (15b3:101d, class Ethernet), so that /sys/class/net/<if>/device is a PCI
 * function as on a real host: "0000:BB:SS.F", subsystem pci, vendor 0x15b3.
 * Ports 2k and 2k+1 are functions 0 and 1 of slot k, like a dual-port NIC.
 * Config space is emulated in memory: no BARs, no capabilities, no
 * interrupts.  A PCI driver (named like ethtool's driver, mlx5_core) binds to
 * these functions only, so device/driver resolves too.
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

static struct {
	struct pci_sysdata sd; /* bus->sysdata: x86 reads domain/node here */
	struct pci_bus *bus;
	struct resource busn;
	spinlock_t lock;
	u8 cfg[SIMNIC_MAX_PORTS][PCI_CFG_SPACE_SIZE];
	u16 num_vfs[SIMNIC_MAX_PORTS];
	bool driver_registered;
} sp;

#define SIMNIC_TOTAL_VFS 8 /* a ConnectX PF as firmware often configures it */

static int port_of(unsigned int devfn)
{
	int port = PCI_SLOT(devfn) * 2 + PCI_FUNC(devfn);

	if (PCI_FUNC(devfn) > 1 || port >= simnic_num_ports)
		return -1;
	return port;
}

static int cfg_read(struct pci_bus *bus, unsigned int devfn, int where,
		    int size, u32 *val)
{
	int port = port_of(devfn);
	unsigned long flags;
	u32 v = 0;
	int i;

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
}

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
	return ret;
}

static void simnic_pci_remove(struct pci_dev *pdev)
{
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
