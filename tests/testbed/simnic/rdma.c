// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA side: one IB device "mlx5_N" per port (RoCE, one IB port bound to the
 * netdev), with mlx5_ib's hw counter names and widths, MOFED's
 * tc/<port>/traffic_class, and optional RoCE LAG: when both ports of a pair
 * are enslaved to the same bond, the two devices are replaced by one
 * "mlx5_bond_N" whose port is bound to the active slave, like mlx5's LAG.
 *
 * The device is not a kernel verbs provider (no PD/QP/CQ ops), so ib_mad,
 * ib_cm and rdma_cm skip it and there is no uverbs device; registration,
 * RDMA netlink, sysfs and the hw counters work.
 */
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <net/ipv6.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/version.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_verbs.h>

#include "simnic.h"

/*
 * ib_device_ops changed under the driver three times between 5.10 and 6.1;
 * the guards follow the upstream commits (the testbed builds 5.10, 6.1 and
 * 6.12, docs/kernels.md):
 * - 5.13 "RDMA: Support more than 255 rdma ports": port numbers u8 -> u32;
 * - 5.14 device attributes move from rdma_set_device_sysfs_group() to
 *   ops.device_group, and alloc_hw_stats() splits into
 *   alloc_hw_port_stats()/alloc_hw_device_stats();
 * - 5.16 struct rdma_stat_desc replaces the names array, with optional
 *   counters (IB_STAT_FLAG_OPTIONAL, is_disabled, modify_hw_stat). Before it
 *   the optional op counters do not exist: build_descs() leaves them out.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 13, 0)
typedef u8 simnic_ib_port_t;
#else
typedef u32 simnic_ib_port_t;
#endif
#define SIMNIC_IB_SPLIT_STATS (LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0))
#define SIMNIC_IB_STAT_DESC (LINUX_VERSION_CODE >= KERNEL_VERSION(5, 16, 0))

static char *ibdev_name = "mlx5_%d";
module_param(ibdev_name, charp, 0444);
MODULE_PARM_DESC(ibdev_name, "RDMA device name format (default mlx5_%d)");

static bool roce_lag;
module_param(roce_lag, bool, 0444);
MODULE_PARM_DESC(roce_lag,
		 "Replace mlx5_N of a bonded port pair by mlx5_bond_N (default 0)");

static bool ib_out_of_seq = true;
module_param(ib_out_of_seq, bool, 0444);
MODULE_PARM_DESC(ib_out_of_seq, "out_of_seq_cnt cap: out_of_sequence");
static bool ib_retrans = true;
module_param(ib_retrans, bool, 0444);
MODULE_PARM_DESC(ib_retrans, "retransmission_q_counters cap");
static bool ib_ext_err = true;
module_param(ib_ext_err, bool, 0444);
MODULE_PARM_DESC(ib_ext_err, "enhanced_error_q_counters cap");
static bool ib_roce_accl = true;
module_param(ib_roce_accl, bool, 0444);
MODULE_PARM_DESC(ib_roce_accl, "roce_accl cap: roce_adp_retrans, roce_slow_restart*");
static bool ib_cong = true;
module_param(ib_cong, bool, 0444);
MODULE_PARM_DESC(ib_cong, "cc_query_allowed cap: rp_cnp_*, np_*");
static bool ib_icrc = true;
module_param(ib_icrc, bool, 0444);
MODULE_PARM_DESC(ib_icrc, "rx_icrc_encapsulated_counter cap");
static bool ib_op_counters = true;
module_param(ib_op_counters, bool, 0444);
MODULE_PARM_DESC(ib_op_counters, "optional counters cc_*_pkts, rdma_*_{packets,bytes}");

struct simnic_tc_attr {
	struct kobj_attribute attr;
	struct simnic_ibdev *ib;
};

struct simnic_ibdev {
	struct ib_device ibdev; /* first: ib_alloc_device() */
	struct simnic_port *members[2];
	int nmembers;
	bool lag;
	int pair;
	struct net_device *bound; /* netdev of IB port 1 */
	bool registered;
	struct list_head list;

	struct mutex tc_lock;
	int tclass; /* -1: unset */
	struct kobject *tc_kobj;
	struct kobject *tc_port_kobj;
	struct simnic_tc_attr tc_attr;
};

/* Protects port->ib, ib->registered and the device list. */
static DEFINE_MUTEX(simnic_ib_lock);
static LIST_HEAD(simnic_ibdevs);
static bool simnic_ib_stopping;

#if SIMNIC_IB_STAT_DESC
static struct rdma_stat_desc simnic_descs[C_NUM - C_IB_BASE];
#else
static const char *simnic_descs[C_NUM - C_IB_BASE];
#define IB_STAT_FLAG_OPTIONAL 1 /* only passed to add_descs() */
#endif
static int simnic_desc_ids[C_NUM - C_IB_BASE];
static int simnic_num_descs;
static int simnic_num_hw; /* non-optional counters come first */

static struct simnic_ibdev *to_sib(struct ib_device *ibdev)
{
	return container_of(ibdev, struct simnic_ibdev, ibdev);
}

static void add_descs(int first, int last, unsigned int flags)
{
	int id;

	for (id = first; id <= last; id++) {
#if SIMNIC_IB_STAT_DESC
		simnic_descs[simnic_num_descs].name = simnic_ctr_names[id];
		simnic_descs[simnic_num_descs].flags = flags;
#else
		simnic_descs[simnic_num_descs] = simnic_ctr_names[id];
#endif
		simnic_desc_ids[simnic_num_descs++] = id;
	}
}

/* mlx5_ib_fill_counters(): groups in emission order, gated by caps. */
static void build_descs(void)
{
	simnic_num_descs = 0;
	add_descs(C_IB_RX_WRITE_REQUESTS, C_IB_OUT_OF_BUFFER, 0);
	if (ib_out_of_seq)
		add_descs(C_IB_OUT_OF_SEQUENCE, C_IB_OUT_OF_SEQUENCE, 0);
	if (ib_retrans)
		add_descs(C_IB_DUPLICATE_REQUEST, C_IB_LOCAL_ACK_TIMEOUT_ERR, 0);
	if (ib_ext_err)
		add_descs(C_IB_RESP_LOCAL_LENGTH_ERROR,
			  C_IB_REQ_RNR_RETRIES_EXCEEDED, 0);
	if (ib_roce_accl)
		add_descs(C_IB_ROCE_ADP_RETRANS, C_IB_ROCE_SLOW_RESTART_TRANS, 0);
	if (ib_cong)
		add_descs(C_IB_RP_CNP_IGNORED, C_IB_NP_CNP_SENT, 0);
	if (ib_icrc)
		add_descs(C_IB_RX_ICRC_ENCAPSULATED, C_IB_RX_ICRC_ENCAPSULATED, 0);
	simnic_num_hw = simnic_num_descs;
	if (ib_op_counters && SIMNIC_IB_STAT_DESC)
		add_descs(C_IB_CC_RX_CE_PKTS, C_IB_CC_TX_CNP_PKTS,
			  IB_STAT_FLAG_OPTIONAL);
}

static struct rdma_hw_stats *simnic_alloc_stats(void)
{
	struct rdma_hw_stats *stats;
#if SIMNIC_IB_STAT_DESC
	int i;
#endif

	stats = rdma_alloc_hw_stats_struct(simnic_descs, simnic_num_descs,
					   RDMA_HW_STATS_DEFAULT_LIFESPAN);
	if (!stats)
		return NULL;
#if SIMNIC_IB_STAT_DESC
	/* optional (op) counters start disabled, like do_alloc_stats() */
	for (i = simnic_num_hw; i < simnic_num_descs; i++)
		set_bit(i, stats->is_disabled);
#endif
	return stats;
}

#if SIMNIC_IB_SPLIT_STATS
static struct rdma_hw_stats *simnic_alloc_port_stats(struct ib_device *ibdev,
						     u32 port_num)
{
	return simnic_alloc_stats();
}

static struct rdma_hw_stats *simnic_alloc_device_stats(struct ib_device *ibdev)
{
	return simnic_alloc_stats();
}
#else
/* port_num 0: the device's own stats */
static struct rdma_hw_stats *simnic_alloc_hw_stats(struct ib_device *ibdev,
						   simnic_ib_port_t port_num)
{
	return simnic_alloc_stats();
}
#endif

/* One "firmware query" fills every counter; a LAG device sums its members. */
static int simnic_get_hw_stats(struct ib_device *ibdev,
			       struct rdma_hw_stats *stats,
			       simnic_ib_port_t port_num, int index)
{
	struct simnic_ibdev *ib = to_sib(ibdev);
	int i, m;

	/* QUERY_Q_COUNTER and the congestion counters, per member */
	for (m = 0; m < ib->nmembers; m++)
		simnic_fw_delay_rdma_stats(ib->members[m]);
	for (i = 0; i < stats->num_counters; i++)
		stats->value[i] = 0;
	for (m = 0; m < ib->nmembers; m++) {
		struct simnic_port *port = ib->members[m];
		u64 now;

		spin_lock_bh(&port->lock);
		now = simnic_now();
		for (i = 0; i < stats->num_counters; i++)
			stats->value[i] += simnic_ctr_value(
				port, simnic_desc_ids[i], now);
		spin_unlock_bh(&port->lock);
	}
	for (i = 0; i < stats->num_counters; i++)
		if (simnic_ctr_is_32bit(simnic_desc_ids[i]))
			stats->value[i] = (u32)stats->value[i];
	return stats->num_counters;
}

#if SIMNIC_IB_STAT_DESC
static int simnic_modify_hw_stat(struct ib_device *ibdev, u32 port,
				 unsigned int index, bool enable)
{
	return index >= simnic_num_hw && index < simnic_num_descs ? 0 : -EINVAL;
}
#endif

static bool simnic_ib_active(struct simnic_ibdev *ib)
{
	int m;

	for (m = 0; m < ib->nmembers; m++)
		if (simnic_port_active(ib->members[m]))
			return true;
	return false;
}

static int simnic_query_port(struct ib_device *ibdev, simnic_ib_port_t port_num,
			     struct ib_port_attr *attr)
{
	struct simnic_ibdev *ib = to_sib(ibdev);
	struct net_device *ndev = READ_ONCE(ib->bound);

	if (simnic_ib_active(ib)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ndev ? min(IB_MTU_4096, iboe_get_mtu(ndev->mtu)) :
				  IB_MTU_1024;
	attr->gid_tbl_len = 255;
	attr->ip_gids = true;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_UVERBS_PCF_IP_BASED_GIDS;
	attr->max_msg_sz = 1 << 30;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 4;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR; /* 100 Gb/sec (4X EDR) */
	return 0;
}

static int simnic_get_port_immutable(struct ib_device *ibdev,
				     simnic_ib_port_t port_num,
				     struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port_num, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE |
				    RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	/* with the MAD capability the core insists on a MAD size */
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static void fw_ver_parse(u32 v[3])
{
	v[0] = v[1] = v[2] = 0;
	if (sscanf(simnic_fw_ver, "%u.%u.%u", &v[0], &v[1], &v[2]) < 1)
		v[0] = 0;
}

static int simnic_query_device(struct ib_device *ibdev,
			       struct ib_device_attr *props,
			       struct ib_udata *uhw)
{
	u32 fw[3];

	if (uhw && (uhw->inlen || uhw->outlen))
		return -EINVAL;
	fw_ver_parse(fw);
	props->fw_ver = ((u64)fw[0] << 32) | ((fw[1] & 0xffff) << 16) |
			(fw[2] & 0xffff);
	props->sys_image_guid = ibdev->node_guid;
	props->max_mr_size = ~0ULL;
	props->page_size_cap = ~(u64)(SZ_4K - 1);
	props->vendor_id = 0x02c9; /* Mellanox */
	props->vendor_part_id = 4125; /* ConnectX-6 Dx */
	props->max_qp = 1 << 17;
	props->max_qp_wr = 1 << 15;
	props->max_send_sge = 30;
	props->max_recv_sge = 30;
	props->max_sge_rd = 30;
	props->max_cq = 1 << 24;
	props->max_cqe = (1 << 22) - 1;
	props->max_mr = 1 << 24;
	props->max_pd = 1 << 24;
	props->max_qp_rd_atom = 16;
	props->max_qp_init_rd_atom = 16;
	props->max_res_rd_atom = (1 << 17) * 16;
	props->max_srq = 1 << 23;
	props->max_srq_wr = (1 << 15) - 1;
	props->max_srq_sge = 31;
	props->max_pkeys = 1;
	props->local_ca_ack_delay = 16;
	props->max_ah = INT_MAX;
	return 0;
}

static enum rdma_link_layer simnic_get_link_layer(struct ib_device *ibdev,
						  simnic_ib_port_t port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int simnic_query_pkey(struct ib_device *ibdev, simnic_ib_port_t port_num,
			     u16 index,
			     u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static void simnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", simnic_fw_ver);
}

/*
 * GID table refusals ("gid_refuse", per port): add_gid fails with -ENOSPC for
 * the GIDs of one address (or of every address), of both RoCE types or of one,
 * as the firmware of a NIC whose GID table is full or failing answers
 * SET_ROCE_ADDRESS.  ib_core's add_roce_gid() then logs "GID add failed" and
 * add_modify_gid() frees the entry without storing it (drivers/infiniband/
 * core/cache.c, the same on 5.10, 6.1 and 6.12): the index stays empty, so
 * sysfs gids/<i> reads the zero GID and gid_attrs/types/<i> and ndevs/<i> fail
 * (ENODATA), as for any unused index.  The kernel does not retry: the
 * address gets its GIDs only when it is added again after the refusal ends.
 */
struct simnic_gid_refuse {
	bool on;
	bool all;	/* every address, else only gid */
	u8 types;	/* bit IB_GID_TYPE_ROCE (v1), IB_GID_TYPE_ROCE_UDP_ENCAP (v2) */
	union ib_gid gid;
};
static struct simnic_gid_refuse simnic_gid_refuse[SIMNIC_MAX_PORTS];
static DEFINE_SPINLOCK(simnic_gid_refuse_lock);

static bool gid_refused(int index, const struct ib_gid_attr *attr)
{
	struct simnic_gid_refuse *r = &simnic_gid_refuse[index];

	return r->on && (r->types & BIT(attr->gid_type)) &&
	       (r->all || !memcmp(&r->gid, &attr->gid, sizeof(r->gid)));
}

static int simnic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct simnic_ibdev *ib = to_sib(attr->device);
	bool refuse = false;
	int i;

	/* no simnic_ib_lock: ib_core calls this from ib_register_device() too */
	spin_lock(&simnic_gid_refuse_lock);
	for (i = 0; i < ib->nmembers; i++)
		refuse |= gid_refused(ib->members[i]->index, attr);
	spin_unlock(&simnic_gid_refuse_lock);
	return refuse ? -ENOSPC : 0;
}

/*
 * gid_refuse off | gid_refuse [v1|v2] all|<IPv4>|<IPv6>: which GIDs the port's
 * add_gid refuses from now on (IPv4 as ib_core makes its GID, ::ffff:a.b.c.d).
 */
int simnic_rdma_ctl(int index, int argc, char **argv, bool apply, char *err,
		    size_t errlen)
{
	struct simnic_gid_refuse r = { .on = true };
	const char *addr;
	__be32 v4;

	if (strcmp(argv[0], "gid_refuse"))
		return -ENOENT;
	if (argc == 2 && !strcmp(argv[1], "off")) {
		r.on = false;
		goto set;
	}
	if (argc == 3 && !strcmp(argv[1], "v1"))
		r.types = BIT(IB_GID_TYPE_ROCE);
	else if (argc == 3 && !strcmp(argv[1], "v2"))
		r.types = BIT(IB_GID_TYPE_ROCE_UDP_ENCAP);
	else if (argc == 2)
		r.types = BIT(IB_GID_TYPE_ROCE) | BIT(IB_GID_TYPE_ROCE_UDP_ENCAP);
	else
		goto usage;
	addr = argv[argc - 1];
	if (!strcmp(addr, "all"))
		r.all = true;
	else if (in4_pton(addr, -1, (u8 *)&v4, -1, NULL))
		ipv6_addr_set_v4mapped(v4, (struct in6_addr *)r.gid.raw);
	else if (!in6_pton(addr, -1, r.gid.raw, -1, NULL))
		goto usage;
set:
	if (apply) {
		spin_lock(&simnic_gid_refuse_lock);
		simnic_gid_refuse[index] = r;
		spin_unlock(&simnic_gid_refuse_lock);
	}
	return 0;
usage:
	snprintf(err, errlen, "usage: gid_refuse off | gid_refuse [v1|v2] all|<IPv4 or IPv6 address>");
	return -EINVAL;
}

static int simnic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return 0;
}

/*
 * Performance Management agent: answers ClassPortInfo, PortCounters and
 * PortCountersExt so the core creates ports/1/counters/ (what node_exporter
 * reads).  On RoCE mlx5 derives these from the vport counters.
 */
static void pma_fill_ext(struct simnic_ibdev *ib,
			 struct ib_pma_portcounters_ext *pc)
{
	u64 tx_b = 0, rx_b = 0, tx_p = 0, rx_p = 0;
	int m;

	for (m = 0; m < ib->nmembers; m++) {
		struct simnic_port *port = ib->members[m];
		u64 now;

		spin_lock_bh(&port->lock);
		now = simnic_now();
		tx_b += simnic_ctr_value(port, C_TX_VPORT_RDMA_UC_BYTES, now);
		rx_b += simnic_ctr_value(port, C_RX_VPORT_RDMA_UC_BYTES, now);
		tx_p += simnic_ctr_value(port, C_TX_VPORT_RDMA_UC_PACKETS, now);
		rx_p += simnic_ctr_value(port, C_RX_VPORT_RDMA_UC_PACKETS, now);
		spin_unlock_bh(&port->lock);
	}
	/* data counters are in 4-byte words */
	pc->port_xmit_data = cpu_to_be64(tx_b >> 2);
	pc->port_rcv_data = cpu_to_be64(rx_b >> 2);
	pc->port_xmit_packets = cpu_to_be64(tx_p);
	pc->port_rcv_packets = cpu_to_be64(rx_p);
	pc->port_unicast_xmit_packets = cpu_to_be64(tx_p);
	pc->port_unicast_rcv_packets = cpu_to_be64(rx_p);
}

static int simnic_process_mad(struct ib_device *ibdev, int mad_flags,
			      simnic_ib_port_t port_num,
			      const struct ib_wc *in_wc,
			      const struct ib_grh *in_grh,
			      const struct ib_mad *in, struct ib_mad *out,
			      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct simnic_ibdev *ib = to_sib(ibdev);
	__be16 attr = in->mad_hdr.attr_id;
	/* PMA attribute data starts after the 40 reserved bytes */
	u8 *pma = out->data + 40;

	if (in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;

	memcpy(out, in, sizeof(*out));
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	memset(out->data, 0, sizeof(out->data));

	if (attr == IB_PMA_CLASS_PORT_INFO) {
		struct ib_class_port_info *cpi = (void *)pma;

		cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
	} else if (attr == IB_PMA_PORT_COUNTERS_EXT) {
		pma_fill_ext(ib, (void *)pma);
	} else if (attr != IB_PMA_PORT_COUNTERS) {
		/* PortCounters: the 32-bit error counters stay zero */
		out->mad_hdr.status =
			cpu_to_be16(IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	}
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

/* hca_type, hw_rev, board_id as mlx5_ib's device attributes */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "MT4125\n");
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t hw_rev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x0\n");
}
static DEVICE_ATTR_RO(hw_rev);

static ssize_t board_id_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "SIM_0000000001\n");
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *simnic_ib_attrs[] = {
	&dev_attr_hw_rev.attr,
	&dev_attr_hca_type.attr,
	&dev_attr_board_id.attr,
	NULL,
};

static const struct attribute_group simnic_ib_attr_group = {
	.attrs = simnic_ib_attrs,
};

static const struct ib_device_ops simnic_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,
#if SIMNIC_IB_SPLIT_STATS
	.device_group = &simnic_ib_attr_group,
#endif

	.query_device = simnic_query_device,
	.query_port = simnic_query_port,
	.get_port_immutable = simnic_get_port_immutable,
	.get_link_layer = simnic_get_link_layer,
	.query_pkey = simnic_query_pkey,
	.get_dev_fw_str = simnic_get_dev_fw_str,
	.add_gid = simnic_add_gid,
	.del_gid = simnic_del_gid,
	.process_mad = simnic_process_mad,
#if SIMNIC_IB_SPLIT_STATS
	.alloc_hw_port_stats = simnic_alloc_port_stats,
	.alloc_hw_device_stats = simnic_alloc_device_stats,
#else
	.alloc_hw_stats = simnic_alloc_hw_stats,
#endif
	.get_hw_stats = simnic_get_hw_stats,
#if SIMNIC_IB_STAT_DESC
	.modify_hw_stat = simnic_modify_hw_stat,
#endif
};

/* ---- MOFED tc/<port>/traffic_class ---- */

#define TCLASS_MAX_CMD 100

static ssize_t traffic_class_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct simnic_ibdev *ib =
		container_of(attr, struct simnic_tc_attr, attr)->ib;
	ssize_t len = 0;

	mutex_lock(&ib->tc_lock);
	if (ib->tclass >= 0)
		len = sysfs_emit(buf, "Global tclass=%d\n", ib->tclass);
	mutex_unlock(&ib->tc_lock);
	return len;
}

/*
 * Accepts what main_ext.c accepts for the global class: "tclass=<n>" or a
 * bare "<n>", n <= 255, a negative n clears it.  Per-destination rules
 * (dst_ip=..., src_ip=...) are not simulated and give -EINVAL.
 */
static ssize_t traffic_class_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct simnic_ibdev *ib =
		container_of(attr, struct simnic_tc_attr, attr)->ib;
	char cmd[TCLASS_MAX_CMD + 1], *s = cmd, *tok;
	bool have = false;
	int tclass = -1;

	if (count > TCLASS_MAX_CMD)
		return -EINVAL;
	memcpy(cmd, buf, count);
	cmd[count] = '\0';
	while ((tok = strsep(&s, ",")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		if (!strncmp(tok, "tclass=", 7))
			tok += 7;
		if (have || kstrtoint(tok, 0, &tclass) || tclass > 0xff)
			return -EINVAL;
		have = true;
	}
	if (!have)
		return -EINVAL;
	mutex_lock(&ib->tc_lock);
	ib->tclass = tclass < 0 ? -1 : tclass;
	mutex_unlock(&ib->tc_lock);
	return count;
}

static int tc_sysfs_create(struct simnic_ibdev *ib)
{
	ib->tc_kobj = kobject_create_and_add("tc", &ib->ibdev.dev.kobj);
	if (!ib->tc_kobj)
		return -ENOMEM;
	ib->tc_port_kobj = kobject_create_and_add("1", ib->tc_kobj);
	if (!ib->tc_port_kobj)
		return -ENOMEM;
	ib->tc_attr.ib = ib;
	sysfs_attr_init(&ib->tc_attr.attr.attr);
	ib->tc_attr.attr.attr.name = "traffic_class";
	ib->tc_attr.attr.attr.mode = 0644;
	ib->tc_attr.attr.show = traffic_class_show;
	ib->tc_attr.attr.store = traffic_class_store;
	return sysfs_create_file(ib->tc_port_kobj, &ib->tc_attr.attr.attr);
}

static void tc_sysfs_remove(struct simnic_ibdev *ib)
{
	kobject_put(ib->tc_port_kobj);
	ib->tc_port_kobj = NULL;
	kobject_put(ib->tc_kobj);
	ib->tc_kobj = NULL;
}

/* ---- device lifetime ---- */

/* The port whose netdev IB port 1 uses: the first active member. */
static struct simnic_port *pick_bound(struct simnic_ibdev *ib)
{
	int m;

	for (m = 0; m < ib->nmembers; m++)
		if (ib->members[m]->lag_tx_enabled || !ib->lag)
			return ib->members[m];
	return ib->members[0];
}

static void sib_destroy(struct simnic_ibdev *ib)
{
	int m;

	mutex_lock(&simnic_ib_lock);
	ib->registered = false;
	for (m = 0; m < ib->nmembers; m++)
		if (ib->members[m]->ib == ib)
			ib->members[m]->ib = NULL;
	list_del(&ib->list);
	mutex_unlock(&simnic_ib_lock);

	tc_sysfs_remove(ib);
	ib_unregister_device(&ib->ibdev);
	ib_dealloc_device(&ib->ibdev);
}

static int sib_create(struct simnic_port **members, int n, bool lag, int pair)
{
	struct simnic_ibdev *ib;
	const u8 *mac;
	u8 *guid;
	int m, err;

	ib = ib_alloc_device(simnic_ibdev, ibdev);
	if (!ib)
		return -ENOMEM;
	for (m = 0; m < n; m++)
		ib->members[m] = members[m];
	ib->nmembers = n;
	ib->lag = lag;
	ib->pair = pair;
	ib->tclass = -1;
	mutex_init(&ib->tc_lock);
	INIT_LIST_HEAD(&ib->list);

	/* node GUID: EUI-64 of the first member's MAC */
	mac = members[0]->netdev->perm_addr;
	if (is_zero_ether_addr(mac))
		mac = members[0]->netdev->dev_addr;
	guid = (u8 *)&ib->ibdev.node_guid;
	guid[0] = mac[0] ^ 2;
	guid[1] = mac[1];
	guid[2] = mac[2];
	guid[3] = 0xff;
	guid[4] = 0xfe;
	guid[5] = mac[3];
	guid[6] = mac[4];
	guid[7] = mac[5];

	ib->ibdev.node_type = RDMA_NODE_IB_CA;
	ib->ibdev.phys_port_cnt = 1;
	ib->ibdev.num_comp_vectors = 1;
	ib->ibdev.dev.parent = members[0]->parent;
	strscpy(ib->ibdev.node_desc, "simnic HCA", sizeof(ib->ibdev.node_desc));
	ib_set_device_ops(&ib->ibdev, &simnic_ib_ops);
#if !SIMNIC_IB_SPLIT_STATS
	rdma_set_device_sysfs_group(&ib->ibdev, &simnic_ib_attr_group);
#endif

	ib->bound = pick_bound(ib)->netdev;
	err = ib_device_set_netdev(&ib->ibdev, ib->bound, 1);
	if (err)
		goto err_dealloc;
	err = ib_register_device(&ib->ibdev, lag ? "mlx5_bond_%d" : ibdev_name,
				 NULL);
	if (err)
		goto err_dealloc;
	err = tc_sysfs_create(ib);
	if (err)
		goto err_unregister;

	mutex_lock(&simnic_ib_lock);
	for (m = 0; m < n; m++)
		members[m]->ib = ib;
	ib->registered = true;
	list_add_tail(&ib->list, &simnic_ibdevs);
	mutex_unlock(&simnic_ib_lock);
	return 0;

err_unregister:
	tc_sysfs_remove(ib);
	ib_unregister_device(&ib->ibdev);
err_dealloc:
	ib_dealloc_device(&ib->ibdev);
	return err;
}

void simnic_rdma_event_work(struct work_struct *work)
{
	struct simnic_port *port = container_of(to_delayed_work(work),
						struct simnic_port,
						ib_event_work);
	struct simnic_ibdev *ib;

	mutex_lock(&simnic_ib_lock);
	ib = port->ib;
	if (ib && ib->registered) {
		struct ib_event ev = {
			.device = &ib->ibdev,
			.element.port_num = 1,
			.event = simnic_ib_active(ib) ? IB_EVENT_PORT_ACTIVE :
							IB_EVENT_PORT_ERR,
		};

		ib_dispatch_event(&ev);
	}
	mutex_unlock(&simnic_ib_lock);
}

/* Called with the port state changed; IB dispatch must not run under RTNL. */
void simnic_rdma_port_event(struct simnic_port *port)
{
	if (!READ_ONCE(simnic_ib_stopping))
		schedule_delayed_work(&port->ib_event_work, 0);
}

void simnic_rdma_port_name(struct simnic_port *port, char *buf, size_t len)
{
	mutex_lock(&simnic_ib_lock);
	if (port->ib && port->ib->registered)
		strscpy(buf, dev_name(&port->ib->ibdev.dev), len);
	else
		strscpy(buf, "-", len);
	mutex_unlock(&simnic_ib_lock);
}

/* ---- RoCE LAG ---- */

static void simnic_lag_work_fn(struct work_struct *work);
static DECLARE_WORK(simnic_lag_work, simnic_lag_work_fn);

static struct simnic_ibdev *find_ib(struct simnic_port *port)
{
	struct simnic_ibdev *ib;

	mutex_lock(&simnic_ib_lock);
	ib = port->ib;
	mutex_unlock(&simnic_ib_lock);
	return ib;
}

/* mlx5_lag: both PFs of the NIC under one bond with a supported TX type. */
static bool pair_wants_lag(struct simnic_port *a, struct simnic_port *b)
{
	return roce_lag && a->lag_upper && a->lag_upper == b->lag_upper &&
	       (a->lag_tx_type == NETDEV_LAG_TX_TYPE_ACTIVEBACKUP ||
		a->lag_tx_type == NETDEV_LAG_TX_TYPE_HASH) &&
	       a->lag_tx_type == b->lag_tx_type;
}

static void simnic_lag_work_fn(struct work_struct *work)
{
	int pair;

	for (pair = 0; pair + 1 < simnic_num_ports; pair += 2) {
		struct simnic_port *a = simnic_ports[pair];
		struct simnic_port *b = simnic_ports[pair + 1];
		struct simnic_port *members[2] = { a, b };
		struct simnic_ibdev *ib;
		bool want;

		if (READ_ONCE(simnic_ib_stopping))
			return;
		rtnl_lock();
		want = pair_wants_lag(a, b);
		rtnl_unlock();
		ib = find_ib(a);

		if (want && !(ib && ib->lag)) {
			if (ib)
				sib_destroy(ib);
			ib = find_ib(b);
			if (ib)
				sib_destroy(ib);
			if (sib_create(members, 2, true, pair))
				pr_err("simnic: cannot create mlx5_bond device\n");
		} else if (!want && ib && ib->lag) {
			sib_destroy(ib);
			if (sib_create(&members[0], 1, false, pair) ||
			    sib_create(&members[1], 1, false, pair))
				pr_err("simnic: cannot re-create mlx5 devices\n");
		} else if (want && ib && ib->lag) {
			/* active-backup failover moves the RoCE netdev */
			struct net_device *nd;

			rtnl_lock();
			nd = pick_bound(ib)->netdev;
			rtnl_unlock();
			if (nd != ib->bound &&
			    !ib_device_set_netdev(&ib->ibdev, nd, 1))
				WRITE_ONCE(ib->bound, nd);
		}
	}
}

/* LAG bookkeeping from the netdev notifier (RTNL held). */
void simnic_rdma_netdev_event(struct simnic_port *port, unsigned long event,
			      void *ptr)
{
	switch (event) {
	case NETDEV_CHANGEUPPER: {
		struct netdev_notifier_changeupper_info *info = ptr;
		struct netdev_lag_upper_info *lag = info->upper_info;

		if (!netif_is_lag_master(info->upper_dev))
			return;
		if (info->linking) {
			port->lag_upper = info->upper_dev->ifindex;
			port->lag_tx_type = lag ? lag->tx_type :
						  NETDEV_LAG_TX_TYPE_UNKNOWN;
		} else {
			port->lag_upper = 0;
			port->lag_tx_enabled = false;
		}
		break;
	}
	case NETDEV_CHANGELOWERSTATE: {
		struct netdev_notifier_changelowerstate_info *info = ptr;
		struct netdev_lag_lower_state_info *st = info->lower_state_info;

		if (!netif_is_lag_port(port->netdev) || !st)
			return;
		port->lag_tx_enabled = st->tx_enabled;
		break;
	}
	default:
		return;
	}
	if (!READ_ONCE(simnic_ib_stopping))
		schedule_work(&simnic_lag_work);
}

int simnic_rdma_init(void)
{
	int i, err;

	build_descs();
	for (i = 0; i < simnic_num_ports; i++) {
		struct simnic_port *members[1] = { simnic_ports[i] };

		err = sib_create(members, 1, false, i & ~1);
		if (err)
			return err;
	}
	return 0;
}

void simnic_rdma_exit(void)
{
	struct simnic_ibdev *ib;
	int i;

	WRITE_ONCE(simnic_ib_stopping, true);
	cancel_work_sync(&simnic_lag_work);
	for (i = 0; i < simnic_num_ports; i++)
		if (simnic_ports[i])
			cancel_delayed_work_sync(&simnic_ports[i]->ib_event_work);
	for (;;) {
		mutex_lock(&simnic_ib_lock);
		ib = list_first_entry_or_null(&simnic_ibdevs,
					      struct simnic_ibdev, list);
		mutex_unlock(&simnic_ib_lock);
		if (!ib)
			break;
		sib_destroy(ib);
	}
}
