/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simnic: a simulated ConnectX (mlx5) NIC for the roce_qos_exporter testbed.
 *
 * One netdev per port with mlx5's dcbnl_rtnl_ops semantics, mlx5 ethtool
 * statistic names and dynamics, MOFED-style sysfs, and an RDMA device with
 * mlx5 hw counter names.  Counters are computed on read as
 * base + rate * elapsed time, so the module runs no timers.
 */
#ifndef SIMNIC_H
#define SIMNIC_H

#include <linux/debugfs.h>
#include <linux/ethtool.h>
#include <linux/etherdevice.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/spinlock.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <net/dcbnl.h>

#define SIMNIC_NUM_PRIO 8
#define SIMNIC_NUM_TC 8
#define SIMNIC_NUM_DSCP 64
#define SIMNIC_NUM_BUFFERS 8
#define SIMNIC_MAX_PORTS 16

/* Per-priority counter kinds; the storage index is C_PRIO(prio, kind). */
enum simnic_prio_kind {
	SP_RX_BYTES,
	SP_RX_PACKETS,
	SP_RX_DISCARDS,
	SP_TX_BYTES,
	SP_TX_PACKETS,
	SP_RX_PAUSE,
	SP_RX_PAUSE_DURATION,
	SP_TX_PAUSE,
	SP_TX_PAUSE_DURATION,
	SP_RX_PAUSE_TRANSITION,
	SP_NUM
};

/* Per-traffic-class counters of mlx5's per_port_buff_congest group. */
enum simnic_tc_kind { ST_BUF_DISCARD, ST_CONG_DISCARD, ST_MARKED, ST_NUM };

#define C_PRIO(p, k) ((p) * SP_NUM + (k))
#define C_TC_BASE (SIMNIC_NUM_PRIO * SP_NUM)
#define C_TC(t, k) (C_TC_BASE + (t) * ST_NUM + (k))

enum simnic_ctr_id {
	C_GLOBAL_BASE = C_TC_BASE + SIMNIC_NUM_TC * ST_NUM,
	C_RX_ECN_MARK = C_GLOBAL_BASE,
	C_RX_OUT_OF_BUFFER,
	C_RX_IF_DOWN_PACKETS,
	C_RX_VPORT_RDMA_UC_PACKETS,
	C_RX_VPORT_RDMA_UC_BYTES,
	C_TX_VPORT_RDMA_UC_PACKETS,
	C_TX_VPORT_RDMA_UC_BYTES,
	C_RX_CRC_ERRORS_PHY,
	C_RX_SYMBOL_ERR_PHY,
	C_RX_PAUSE_CTRL_PHY,
	C_TX_PAUSE_CTRL_PHY,
	C_RX_DISCARDS_PHY,
	C_TX_DISCARDS_PHY,
	C_TX_ERRORS_PHY,
	C_LINK_DOWN_EVENTS_PHY,
	C_RX_BUFFER_PASSED_THRES_PHY,
	C_STORM_WARNING,
	C_STORM_ERROR,
	/* RDMA hw counters, in mlx5_ib emission order (counters.c) */
	C_IB_BASE,
	C_IB_RX_WRITE_REQUESTS = C_IB_BASE,
	C_IB_RX_READ_REQUESTS,
	C_IB_RX_ATOMIC_REQUESTS,
	C_IB_RX_DCT_CONNECT,
	C_IB_OUT_OF_BUFFER,
	C_IB_OUT_OF_SEQUENCE,
	C_IB_DUPLICATE_REQUEST,
	C_IB_RNR_NAK_RETRY_ERR,
	C_IB_PACKET_SEQ_ERR,
	C_IB_IMPLIED_NAK_SEQ_ERR,
	C_IB_LOCAL_ACK_TIMEOUT_ERR,
	C_IB_RESP_LOCAL_LENGTH_ERROR,
	C_IB_RESP_CQE_ERROR,
	C_IB_REQ_CQE_ERROR,
	C_IB_REQ_REMOTE_INVALID_REQUEST,
	C_IB_REQ_REMOTE_ACCESS_ERRORS,
	C_IB_RESP_REMOTE_ACCESS_ERRORS,
	C_IB_RESP_CQE_FLUSH_ERROR,
	C_IB_REQ_CQE_FLUSH_ERROR,
	C_IB_REQ_TRANSPORT_RETRIES_EXCEEDED,
	C_IB_REQ_RNR_RETRIES_EXCEEDED,
	C_IB_ROCE_ADP_RETRANS,
	C_IB_ROCE_ADP_RETRANS_TO,
	C_IB_ROCE_SLOW_RESTART,
	C_IB_ROCE_SLOW_RESTART_CNPS,
	C_IB_ROCE_SLOW_RESTART_TRANS,
	C_IB_Q_END, /* Q counters above are 32-bit on mlx5 */
	C_IB_RP_CNP_IGNORED = C_IB_Q_END,
	C_IB_RP_CNP_HANDLED,
	C_IB_NP_ECN_MARKED_ROCE_PACKETS,
	C_IB_NP_CNP_SENT,
	C_IB_RX_ICRC_ENCAPSULATED,
	C_IB_CC_RX_CE_PKTS,
	C_IB_RDMA_TX_PACKETS,
	C_IB_RDMA_TX_BYTES,
	C_IB_RDMA_RX_PACKETS,
	C_IB_RDMA_RX_BYTES,
	C_IB_CC_RX_CNP_PKTS,
	C_IB_CC_TX_CNP_PKTS,
	/*
	 * Link health (link.c): mlx5's phy statistical group (PPCNT group
	 * 0x16) and the FEC block counters of the physical layer group (0x12),
	 * named after their PPCNT fields where ethtool -S has no name.
	 */
	C_LINK_BASE,
	C_RX_BITS_PHY = C_LINK_BASE, /* phy_received_bits */
	C_RX_PCS_SYMBOL_ERR_PHY,     /* phy_symbol_errors */
	C_RX_ERR_LANE0_PHY,	     /* phy_corrected_bits_lane0..3 */
	C_RX_ERR_LANE3_PHY = C_RX_ERR_LANE0_PHY + 3,
	C_RS_FEC_CORRECTED_BLOCKS,
	C_RS_FEC_UNCORRECTABLE_BLOCKS,
	C_FC_FEC_CORRECTED_LANE0, /* fc_fec_corrected_blocks_lane0..3 */
	C_FC_FEC_UNCORRECTABLE_LANE0 = C_FC_FEC_CORRECTED_LANE0 + 4,
	C_LINK_END = C_FC_FEC_UNCORRECTABLE_LANE0 + 4,
	C_NUM = C_LINK_END
};

static inline bool simnic_ctr_is_32bit(int id)
{
	return id >= C_IB_BASE && id < C_IB_Q_END;
}

struct simnic_ctr {
	u64 base;  /* value at t_ref */
	u64 rate;  /* user rate, per second */
	u64 t_ref; /* ktime ns of the last fold */
};

enum simnic_dir { SIMNIC_RX, SIMNIC_TX };

/*
 * A PFC storm on (prio, dir).  dir TX: this NIC is stalled and keeps sending
 * pause frames (mlx5 "device stall"); the firmware's stall prevention fires
 * the warning event at t_minor and the error event at t_crit, after which the
 * NIC stops pausing and drops.  dir RX: the peer keeps pausing this NIC.
 */
struct simnic_storm {
	bool active;
	u64 t0;
	u64 t_minor; /* U64_MAX when stall prevention is disabled */
	u64 t_crit;
	u64 pause_rate;
};

struct simnic_port;

struct simnic_ecn_en_attr {
	struct kobj_attribute attr;
	struct simnic_port *port;
	u8 role;
	u8 prio;
	char name[2];
};

struct simnic_ecn_param_attr {
	struct kobj_attribute attr;
	struct simnic_port *port;
	u8 role;
	u8 idx;
};

enum simnic_ecn_role { SIMNIC_ECN_RP, SIMNIC_ECN_NP, SIMNIC_ECN_ROLES };

#define SIMNIC_RP_PARAMS 16
#define SIMNIC_NP_PARAMS 3

/* CEE staging area, applied by setall like mlx5's cee_cfg. */
struct simnic_cee {
	u8 prio_to_pg[SIMNIC_NUM_PRIO];
	u8 pg_bw_pct[SIMNIC_NUM_TC];
	u8 pfc_setting[SIMNIC_NUM_PRIO];
	u8 pfc_enable;
};

struct simnic_ibdev;

/* fw.c: what a simulated firmware read is for */
enum simnic_fw_kind { SIMNIC_FW_STATS, SIMNIC_FW_QOS, SIMNIC_FW_KINDS };

struct simnic_port {
	struct net_device *netdev;
	struct platform_device *pdev; /* parent without the PCI bus */
	struct pci_dev *pcidev;	      /* parent on the simulated PCI bus */
	struct device *parent;
	int index;
	char name[IFNAMSIZ]; /* name at creation, used for debugfs */

	/* Counters, storms, running state and ECN state. */
	spinlock_t lock;
	struct simnic_ctr ctr[C_NUM];
	struct simnic_storm storm[2][SIMNIC_NUM_PRIO];
	bool running; /* counters advance only while the port is up */
	bool cable;   /* the simulated physical link */
	u8 ecn_en[SIMNIC_ECN_ROLES];
	u32 rp_param[SIMNIC_RP_PARAMS];
	u32 np_param[SIMNIC_NP_PARAMS];
	u32 cnp_prio_mode; /* inbox np_cnp_prio_mode (cc_params.c) */
	u64 storm_pause_rate; /* default pause frames/s during a storm */

	/* QoS "firmware" state; written under RTNL. */
	u8 pfc_en;
	u16 cable_len;
	u64 pfc_cache_req[SIMNIC_NUM_PRIO]; /* stale like mlx5's pport cache */
	u64 pfc_cache_ind[SIMNIC_NUM_PRIO];
	u8 prio_tc[SIMNIC_NUM_PRIO];
	u8 tc_group[SIMNIC_NUM_TC];
	u8 tc_bw[SIMNIC_NUM_TC];
	u8 tc_tsa[SIMNIC_NUM_TC]; /* driver cache, as priv->dcbx.tc_tsa */
	u16 maxrate_val[SIMNIC_NUM_TC];
	u8 maxrate_unit[SIMNIC_NUM_TC];
	u8 prio2buffer[SIMNIC_NUM_PRIO];
	u32 buffer_size[SIMNIC_NUM_BUFFERS];
	u32 total_size;
	u8 dscp2prio[SIMNIC_NUM_DSCP];
	bool trust_dscp;
	u16 dscp_app_cnt;
	u8 dcbx_cap;
	bool dcbx_host;
	bool rx_pause;
	bool tx_pause;
	u16 stall_critical_ms; /* 0 = stall prevention disabled */
	u16 stall_minor_ms;
	struct simnic_cee cee;

	/* MOFED-style sysfs */
	struct kobject *ecn_kobj;
	struct kobject *role_kobj[SIMNIC_ECN_ROLES];
	struct kobject *en_kobj[SIMNIC_ECN_ROLES];
	struct simnic_ecn_en_attr en_attr[SIMNIC_ECN_ROLES][SIMNIC_NUM_PRIO];
	struct simnic_ecn_param_attr rp_attr[SIMNIC_RP_PARAMS];
	struct simnic_ecn_param_attr np_attr[SIMNIC_NP_PARAMS];
	bool groups_created;

	struct simnic_ibdev *ib; /* the RDMA device this port belongs to */
	int lag_upper;		 /* ifindex of the bond master, 0 if none */
	enum netdev_lag_tx_type lag_tx_type;
	bool lag_tx_enabled;
	bool flap_pending;
	bool dying;		 /* teardown started: no new link flap */
	char ctl_err[128];	 /* last control-file error, for the dump */
	/* rx.c: injected frames and firmware LLDP */
	bool fw_lldp;		 /* firmware consumes LLDP frames (rx and tx) */
	atomic64_t rx_frames;	 /* frames rx_frame delivered to the stack */
	atomic64_t fw_lldp_rx;	 /* LLDP frames firmware swallowed */
	atomic64_t fw_lldp_tx;	 /* host LLDP frames firmware dropped */
	struct dentry *dbg_dir;
	/* fw.c: per-read firmware latency, us; -1 follows the module parameter */
	int fw_latency_us[SIMNIC_FW_KINDS];
	atomic64_t fw_sleeps;	      /* sleeps of up to 20 ms taken */
	atomic64_t fw_calls;	      /* modelled firmware reads, any latency */
	atomic64_t fw_model_ns;	      /* their summed modelled latency */
	atomic64_t fw_sleep_error_ns; /* their sum of (slept - modelled) */
	struct delayed_work flap_work;
	struct delayed_work ib_event_work;
	bool registered;
	u32 fec_active; /* link.c: ETHTOOL_FEC_* of the active FEC mode */
};

/* main.c */
extern unsigned int simnic_num_ports;
extern struct simnic_port *simnic_ports[SIMNIC_MAX_PORTS];
extern bool simnic_cap_storm;
extern bool simnic_cap_sbcam;
extern bool simnic_cap_buffer;
extern bool simnic_cap_dscp;
extern bool simnic_cap_rx_buffer_fullness;
extern bool simnic_pfc_stats_cache;
extern unsigned int simnic_link_flap_ms;
extern unsigned int simnic_write_latency_ms;
int simnic_write_latency(bool ecn);
extern char *simnic_fw_ver;
extern char *simnic_drv_name;
void simnic_set_cable(struct simnic_port *port, bool up);
void simnic_toggle_link(struct simnic_port *port);
void simnic_update_running(struct simnic_port *port);
bool simnic_port_active(struct simnic_port *port);
bool simnic_is_port(const struct net_device *dev);

/* counters.c */
extern char simnic_ctr_names[C_NUM][ETH_GSTRING_LEN];
void simnic_ctr_names_init(void);
int simnic_ctr_lookup(const char *name);
u64 simnic_now(void);
u64 simnic_ctr_value(struct simnic_port *port, int id, u64 now);
u64 simnic_ctr_report(struct simnic_port *port, int id, u64 now);
u64 simnic_ctr_eff_rate(struct simnic_port *port, int id, u64 now);
void simnic_ctr_fold(struct simnic_port *port, int id, u64 now);
void simnic_ctr_fold_all(struct simnic_port *port, u64 now);
void simnic_ctr_set(struct simnic_port *port, int id, u64 value, u64 now);
void simnic_ctr_add(struct simnic_port *port, int id, u64 delta, u64 now);
void simnic_ctr_set_rate(struct simnic_port *port, int id, u64 rate, u64 now);
u64 simnic_sum_prio(struct simnic_port *port, int kind, u64 now);
int simnic_storm_start(struct simnic_port *port, int prio, int dir, u64 rate, u64 now);
int simnic_storm_stop(struct simnic_port *port, int prio, int dir, u64 now);
void simnic_storm_stop_all(struct simnic_port *port, u64 now);

/* fw.c */
void simnic_fw_latency_init(struct simnic_port *port);
unsigned int simnic_fw_latency(struct simnic_port *port,
			       enum simnic_fw_kind kind);
void simnic_fw_delay(struct simnic_port *port, enum simnic_fw_kind kind);
void simnic_fw_delay_rdma_stats(struct simnic_port *port);
int simnic_fw_latency_set(struct simnic_port *port, enum simnic_fw_kind kind,
			  int us);

/* dcb.c */
extern const struct dcbnl_rtnl_ops simnic_dcbnl_ops;
void simnic_dcb_init(struct simnic_port *port);
void simnic_dcb_cleanup(struct simnic_port *port);
int simnic_dcb_setapp(struct net_device *dev, struct dcb_app *app);
int simnic_dcb_delapp(struct net_device *dev, struct dcb_app *app);
int simnic_dcb_validate_ets(const struct ieee_ets *ets);
void simnic_dcb_apply_ets(struct simnic_port *port, const struct ieee_ets *ets);
void simnic_dcb_getets(struct simnic_port *port, struct ieee_ets *ets);
int simnic_dcb_set_pfc_en(struct simnic_port *port, u8 pfc_en, bool toggle);
int simnic_dcb_setmaxrate_one(struct simnic_port *port, int tc, u64 rate,
			      u16 *val, u8 *unit);
u64 simnic_dcb_maxrate_kbps(struct simnic_port *port, int tc);

/* ethtool.c */
extern const struct ethtool_ops simnic_ethtool_ops;
void simnic_set_stall(struct simnic_port *port, u16 critical_ms);

/* sysfs.c */
int simnic_sysfs_create(struct simnic_port *port);
void simnic_sysfs_remove(struct simnic_port *port);

/* rdma.c */
int simnic_rdma_init(void);
void simnic_rdma_exit(void);
void simnic_rdma_port_event(struct simnic_port *port);
void simnic_rdma_event_work(struct work_struct *work);
void simnic_rdma_port_name(struct simnic_port *port, char *buf, size_t len);
void simnic_rdma_netdev_event(struct simnic_port *port, unsigned long event,
			      void *ptr);

/* pci.c */
int simnic_pci_init(void);
void simnic_pci_exit(void);
struct pci_dev *simnic_pci_dev(int port);

/* mon.c */
struct seq_file;
int simnic_mon_init(void);
void simnic_mon_exit(void);
int simnic_mon_show(struct seq_file *m, void *v);

/* module.c: pluggable module EEPROM (SFF-8636 on even ports, CMIS on odd) */
enum simnic_module_field {
	SIMNIC_MOD_TEMP,     /* milli-degC */
	SIMNIC_MOD_VCC,      /* uV */
	SIMNIC_MOD_RX_POWER, /* uW, per lane */
	SIMNIC_MOD_TX_POWER, /* uW, per lane */
	SIMNIC_MOD_BIAS,     /* uA, per lane */
};
int simnic_get_module_info(struct net_device *dev, struct ethtool_modinfo *modinfo);
int simnic_get_module_eeprom(struct net_device *dev, struct ethtool_eeprom *ee,
			     u8 *data);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
int simnic_get_module_eeprom_by_page(struct net_device *dev,
				     const struct ethtool_module_eeprom *req,
				     struct netlink_ext_ack *extack);
#endif
/* lane -1 = all lanes (ignored for temperature and voltage) */
int simnic_module_set(struct simnic_port *port, enum simnic_module_field field,
		      int lane, s64 value);

/* rx.c */
int simnic_rx_frame(struct simnic_port *port, const u8 *frame,
		    unsigned int len);
bool simnic_tx_fw_lldp(struct simnic_port *port, struct sk_buff *skb);
void simnic_rx_reset(struct simnic_port *port);

/* ctl.c */
int simnic_ctl_init(void);
/* cc_params.c */
extern bool simnic_mofed_sysfs;
void simnic_cc_params_init(void);
void simnic_cc_params_exit(void);
void simnic_ctl_exit(void);
int simnic_ctl_port_add(struct simnic_port *port);
void simnic_ctl_port_remove(struct simnic_port *port);
void simnic_ctl_port_rename(struct simnic_port *port);

/* pci.c, rdma.c: control-file commands (pcie_link, aer; gid_refuse); each
 * returns -ENOENT for a command that is not its own */
int simnic_pci_ctl(int port, int argc, char **argv, bool apply, char *err,
		   size_t errlen);
int simnic_rdma_ctl(int port, int argc, char **argv, bool apply, char *err,
		    size_t errlen);

/* link.c: FEC and link-health statistics (mlx5 PPCNT/PPLM model) */
#define SIMNIC_FEC_LANES 4
extern bool simnic_rx_bits_phy;
void simnic_link_init(struct simnic_port *port);
void simnic_fw_delay_reg(struct simnic_port *port); /* fw.c */
u64 simnic_corrected_bits(struct simnic_port *port, u64 now);
int simnic_fec_parse(const char *s, u32 *fec);
const char *simnic_fec_name(u32 fec);
void simnic_fec_link_modes(struct simnic_port *port,
			   struct ethtool_link_ksettings *ks);
int simnic_get_fecparam(struct net_device *dev, struct ethtool_fecparam *fec);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
void simnic_get_fec_stats(struct net_device *dev,
			  struct ethtool_fec_stats *stats);
void simnic_get_eth_phy_stats(struct net_device *dev,
			      struct ethtool_eth_phy_stats *stats);
void simnic_get_eth_mac_stats(struct net_device *dev,
			      struct ethtool_eth_mac_stats *stats);
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
void simnic_get_link_ext_stats(struct net_device *dev,
			       struct ethtool_link_ext_stats *stats);
#endif

#endif /* SIMNIC_H */
