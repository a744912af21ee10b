// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool_ops with mlx5e's statistic names, order and dynamics: the string
 * set is rebuilt on every call, so its size follows pfc_en and link-level
 * pause exactly as mlx5e_grp_per_prio_pfc_get_num_stats() does.
 */
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <generated/utsrelease.h>

#include "simnic.h"

#define SIMNIC_SPEED SPEED_100000

/* mlx5 en_ethtool.c */
#define PFC_PREVEN_AUTO_TOUT_MSEC 100
#define PFC_PREVEN_TOUT_MAX_MSEC 8000
#define PFC_PREVEN_TOUT_MIN_MSEC 80
#define PFC_PREVEN_MINOR_PERCENT 85

struct simnic_emit {
	struct simnic_port *port;
	u64 now;
	u8 *strings; /* NULL: names not wanted */
	u64 *data;   /* NULL: values not wanted */
	int n;
};

static void emit(struct simnic_emit *e, const char *name, u64 value)
{
	if (e->strings)
		strscpy(e->strings + e->n * ETH_GSTRING_LEN, name,
			ETH_GSTRING_LEN);
	if (e->data)
		e->data[e->n] = value;
	e->n++;
}

static void emit_ctr(struct simnic_emit *e, int id)
{
	emit(e, simnic_ctr_names[id],
	     e->data ? simnic_ctr_value(e->port, id, e->now) : 0);
}

static u64 sum(struct simnic_emit *e, int kind)
{
	return e->data ? simnic_sum_prio(e->port, kind, e->now) : 0;
}

/*
 * Walk the groups in mlx5e_nic_stats_grps[] order (a representative subset
 * of each): sw, qcnt, vport, 802_3, 2863, phy, eth_ext, per_prio, channels,
 * per_port_buff_congest.  Caller holds RTNL and port->lock.
 */
static void simnic_walk_stats(struct simnic_emit *e)
{
	struct simnic_port *port = e->port;
	u8 pfc = port->pfc_en;
	int p;

	/* sw */
	emit(e, "rx_packets", sum(e, SP_RX_PACKETS));
	emit(e, "rx_bytes", sum(e, SP_RX_BYTES));
	emit(e, "tx_packets", sum(e, SP_TX_PACKETS));
	emit(e, "tx_bytes", sum(e, SP_TX_BYTES));
	emit_ctr(e, C_RX_ECN_MARK);
	/* qcnt */
	emit_ctr(e, C_RX_OUT_OF_BUFFER);
	emit_ctr(e, C_RX_IF_DOWN_PACKETS);
	/* vport */
	emit_ctr(e, C_RX_VPORT_RDMA_UC_PACKETS);
	emit_ctr(e, C_RX_VPORT_RDMA_UC_BYTES);
	emit_ctr(e, C_TX_VPORT_RDMA_UC_PACKETS);
	emit_ctr(e, C_TX_VPORT_RDMA_UC_BYTES);
	/* 802_3 */
	emit(e, "tx_packets_phy", sum(e, SP_TX_PACKETS));
	emit(e, "rx_packets_phy", sum(e, SP_RX_PACKETS));
	emit_ctr(e, C_RX_CRC_ERRORS_PHY);
	emit(e, "tx_bytes_phy", sum(e, SP_TX_BYTES));
	emit(e, "rx_bytes_phy", sum(e, SP_RX_BYTES));
	emit_ctr(e, C_RX_SYMBOL_ERR_PHY);
	emit_ctr(e, C_RX_PAUSE_CTRL_PHY);
	emit_ctr(e, C_TX_PAUSE_CTRL_PHY);
	/* 2863 */
	emit_ctr(e, C_RX_DISCARDS_PHY);
	emit_ctr(e, C_TX_DISCARDS_PHY);
	emit_ctr(e, C_TX_ERRORS_PHY);
	/* phy */
	emit_ctr(e, C_LINK_DOWN_EVENTS_PHY);
	/* phy statistical (ppcnt_statistical_group), then per_lane_error_counters */
	if (simnic_rx_bits_phy)
		emit_ctr(e, C_RX_BITS_PHY);
	emit_ctr(e, C_RX_PCS_SYMBOL_ERR_PHY);
	emit(e, "rx_corrected_bits_phy",
	     e->data ? simnic_corrected_bits(port, e->now) : 0);
	for (p = 0; p < SIMNIC_FEC_LANES; p++)
		emit_ctr(e, C_RX_ERR_LANE0_PHY + p);
	/* eth_ext */
	if (simnic_cap_rx_buffer_fullness)
		emit_ctr(e, C_RX_BUFFER_PASSED_THRES_PHY);

	/* per_prio: traffic, prio loop outermost */
	for (p = 0; p < SIMNIC_NUM_PRIO; p++) {
		emit_ctr(e, C_PRIO(p, SP_RX_BYTES));
		emit_ctr(e, C_PRIO(p, SP_RX_PACKETS));
		emit_ctr(e, C_PRIO(p, SP_RX_DISCARDS));
		emit_ctr(e, C_PRIO(p, SP_TX_BYTES));
		emit_ctr(e, C_PRIO(p, SP_TX_PACKETS));
	}
	/* per_prio: PFC, only for priorities with PFC enabled */
	for (p = 0; p < SIMNIC_NUM_PRIO; p++) {
		if (!(pfc & BIT(p)))
			continue;
		emit_ctr(e, C_PRIO(p, SP_RX_PAUSE));
		emit_ctr(e, C_PRIO(p, SP_RX_PAUSE_DURATION));
		emit_ctr(e, C_PRIO(p, SP_TX_PAUSE));
		emit_ctr(e, C_PRIO(p, SP_TX_PAUSE_DURATION));
		emit_ctr(e, C_PRIO(p, SP_RX_PAUSE_TRANSITION));
	}
	/* per_prio: global pause, read from per_prio_counters[0] like mlx5 */
	if (port->rx_pause || port->tx_pause) {
		static const int kinds[] = { SP_RX_PAUSE, SP_RX_PAUSE_DURATION,
					     SP_TX_PAUSE, SP_TX_PAUSE_DURATION,
					     SP_RX_PAUSE_TRANSITION };
		static const char *const names[] = {
			"rx_global_pause", "rx_global_pause_duration",
			"tx_global_pause", "tx_global_pause_duration",
			"rx_global_pause_transition"
		};
		int i;

		for (i = 0; i < ARRAY_SIZE(kinds); i++)
			emit(e, names[i],
			     e->data ? simnic_ctr_value(port, C_PRIO(0, kinds[i]),
							e->now) : 0);
	}
	if (simnic_cap_storm) {
		emit_ctr(e, C_STORM_WARNING);
		emit_ctr(e, C_STORM_ERROR);
	}

	/* channels: a single channel carries the sw counters */
	emit(e, "rx0_packets", sum(e, SP_RX_PACKETS));
	emit(e, "rx0_bytes", sum(e, SP_RX_BYTES));
	emit(e, "tx0_packets", sum(e, SP_TX_PACKETS));
	emit(e, "tx0_bytes", sum(e, SP_TX_BYTES));

	/* per_port_buff_congest: indexed by traffic class */
	if (simnic_cap_sbcam) {
		for (p = 0; p < SIMNIC_NUM_TC; p++) {
			emit_ctr(e, C_TC(p, ST_BUF_DISCARD));
			emit_ctr(e, C_TC(p, ST_CONG_DISCARD));
			emit_ctr(e, C_TC(p, ST_MARKED));
		}
	}
}

static int simnic_stats_walk(struct net_device *dev, u8 *strings, u64 *data)
{
	struct simnic_emit e = {
		.port = netdev_priv(dev),
		.strings = strings,
		.data = data,
	};

	spin_lock_bh(&e.port->lock);
	e.now = simnic_now();
	simnic_walk_stats(&e);
	spin_unlock_bh(&e.port->lock);
	return e.n;
}

static int simnic_get_sset_count(struct net_device *dev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return simnic_stats_walk(dev, NULL, NULL);
}

static void simnic_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		simnic_stats_walk(dev, data, NULL);
}

static void simnic_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct simnic_port *port = netdev_priv(dev);
	u64 now;
	int p;

	simnic_fw_delay(port, SIMNIC_FW_STATS); /* mlx5e_stats_update() */
	simnic_stats_walk(dev, NULL, data);

	/* mlx5e_stats_update() refreshes the pport cache DCB getpfc reads */
	spin_lock_bh(&port->lock);
	now = simnic_now();
	for (p = 0; p < SIMNIC_NUM_PRIO; p++) {
		port->pfc_cache_req[p] =
			simnic_ctr_value(port, C_PRIO(p, SP_TX_PAUSE), now);
		port->pfc_cache_ind[p] =
			simnic_ctr_value(port, C_PRIO(p, SP_RX_PAUSE), now);
	}
	spin_unlock_bh(&port->lock);
}

static void simnic_get_drvinfo(struct net_device *dev,
			       struct ethtool_drvinfo *info)
{
	struct simnic_port *port = netdev_priv(dev);

	strscpy(info->driver, simnic_drv_name, sizeof(info->driver));
	strscpy(info->version, UTS_RELEASE, sizeof(info->version));
	snprintf(info->fw_version, sizeof(info->fw_version), "%s (SIM_0000000001)",
		 simnic_fw_ver);
	strscpy(info->bus_info, dev_name(port->parent),
		sizeof(info->bus_info));
}

static int simnic_get_link_ksettings(struct net_device *dev,
				     struct ethtool_link_ksettings *ks)
{
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ethtool_link_ksettings_add_link_mode(ks, supported,
					     100000baseCR4_Full);
	ethtool_link_ksettings_add_link_mode(ks, supported, FIBRE);
	ethtool_link_ksettings_add_link_mode(ks, supported, Pause);
	ethtool_link_ksettings_add_link_mode(ks, advertising,
					     100000baseCR4_Full);
	ethtool_link_ksettings_add_link_mode(ks, advertising, FIBRE);
	ethtool_link_ksettings_add_link_mode(ks, advertising, Pause);
	simnic_fec_link_modes(netdev_priv(dev), ks);
	/* mlx5 reports the operational speed, unknown while the link is down */
	if (netif_carrier_ok(dev)) {
		ks->base.speed = SIMNIC_SPEED;
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	ks->base.port = PORT_DA;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static void simnic_get_pauseparam(struct net_device *dev,
				  struct ethtool_pauseparam *pp)
{
	struct simnic_port *port = netdev_priv(dev);

	pp->autoneg = 0;
	pp->rx_pause = port->rx_pause;
	pp->tx_pause = port->tx_pause;
}

static int simnic_set_pauseparam(struct net_device *dev,
				 struct ethtool_pauseparam *pp)
{
	struct simnic_port *port = netdev_priv(dev);

	if (pp->autoneg)
		return -EINVAL;
	/* PFC and link-level pause are mutually exclusive (802.1Qbb) */
	if ((pp->rx_pause || pp->tx_pause) && port->pfc_en)
		return -EINVAL;
	port->rx_pause = !!pp->rx_pause;
	port->tx_pause = !!pp->tx_pause;
	return 0;
}

static void simnic_get_pause_stats(struct net_device *dev,
				   struct ethtool_pause_stats *stats)
{
	struct simnic_port *port = netdev_priv(dev);
	u64 now;

	simnic_fw_delay(port, SIMNIC_FW_STATS); /* PPCNT */
	spin_lock_bh(&port->lock);
	now = simnic_now();
	stats->tx_pause_frames = simnic_ctr_value(port, C_TX_PAUSE_CTRL_PHY, now);
	stats->rx_pause_frames = simnic_ctr_value(port, C_RX_PAUSE_CTRL_PHY, now);
	spin_unlock_bh(&port->lock);
}

/* mlx5_set_port_stall_watermark(): critical and minor watermarks in ms. */
void simnic_set_stall(struct simnic_port *port, u16 critical_ms)
{
	port->stall_critical_ms = critical_ms;
	port->stall_minor_ms = critical_ms ?
		max_t(u16, PFC_PREVEN_TOUT_MIN_MSEC,
		      (critical_ms * PFC_PREVEN_MINOR_PERCENT) / 100) : 0;
}

static int simnic_get_tunable(struct net_device *dev,
			      const struct ethtool_tunable *tuna, void *data)
{
	struct simnic_port *port = netdev_priv(dev);

	if (tuna->id != ETHTOOL_PFC_PREVENTION_TOUT)
		return -EINVAL;
	if (!simnic_cap_storm)
		return -EOPNOTSUPP;
	*(u16 *)data = port->stall_critical_ms;
	return 0;
}

static int simnic_set_tunable(struct net_device *dev,
			      const struct ethtool_tunable *tuna,
			      const void *data)
{
	struct simnic_port *port = netdev_priv(dev);
	u16 tout;

	if (tuna->id != ETHTOOL_PFC_PREVENTION_TOUT)
		return -EINVAL;
	if (!simnic_cap_storm)
		return -EOPNOTSUPP;
	tout = *(const u16 *)data;
	if (tout == PFC_STORM_PREVENTION_AUTO)
		tout = PFC_PREVEN_AUTO_TOUT_MSEC;
	else if (tout != PFC_STORM_PREVENTION_DISABLE &&
		 (tout < PFC_PREVEN_TOUT_MIN_MSEC ||
		  tout > PFC_PREVEN_TOUT_MAX_MSEC))
		return -EINVAL;
	simnic_set_stall(port, tout);
	return 0;
}

const struct ethtool_ops simnic_ethtool_ops = {
	.get_drvinfo = simnic_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = simnic_get_link_ksettings,
	.get_pauseparam = simnic_get_pauseparam,
	.set_pauseparam = simnic_set_pauseparam,
	.get_pause_stats = simnic_get_pause_stats,
	.get_sset_count = simnic_get_sset_count,
	.get_strings = simnic_get_strings,
	.get_ethtool_stats = simnic_get_ethtool_stats,
	.get_tunable = simnic_get_tunable,
	.set_tunable = simnic_set_tunable,
	.get_module_info = simnic_get_module_info,
	.get_module_eeprom = simnic_get_module_eeprom,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
	.get_module_eeprom_by_page = simnic_get_module_eeprom_by_page,
#endif
	/* link.c */
	.get_fecparam = simnic_get_fecparam,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
	.get_fec_stats = simnic_get_fec_stats,
	.get_eth_phy_stats = simnic_get_eth_phy_stats,
	.get_eth_mac_stats = simnic_get_eth_mac_stats,
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	.get_link_ext_stats = simnic_get_link_ext_stats,
#endif
};
