// SPDX-License-Identifier: GPL-2.0
/*
 * Link health as mlx5 reports it: the active FEC mode (PPLM), FEC block
 * counters (PPCNT physical layer group), corrected bits (PPCNT phy
 * statistical group) and the IEEE 802.3 counters, served to both ethtool
 * netlink (get_fec_stats, get_eth_phy_stats, get_eth_mac_stats,
 * get_link_ext_stats) and mlx5's ethtool -S names from the same counters.
 */
#include <linux/ethtool.h>
#include <linux/moduleparam.h>

#include "simnic.h"

/*
 * Newer mlx5 drivers put phy_received_bits in ethtool -S as rx_bits_phy;
 * the drivers of the real captures lack it.  Writable at run time: the
 * string set follows at once, as it follows a PFC change.
 */
bool simnic_rx_bits_phy;
module_param_named(rx_bits_phy, simnic_rx_bits_phy, bool, 0644);
MODULE_PARM_DESC(rx_bits_phy,
		 "ethtool -S has rx_bits_phy (newer mlx5 drivers; default 0)");

static const struct {
	const char *name;
	u32 fec;
} fec_names[] = {
	{ "off", ETHTOOL_FEC_OFF },
	{ "none", ETHTOOL_FEC_OFF },
	{ "baser", ETHTOOL_FEC_BASER },
	{ "rs", ETHTOOL_FEC_RS },
	{ "llrs", ETHTOOL_FEC_LLRS },
};

/* A 100G CR4 link trains with RS(528,514). */
void simnic_link_init(struct simnic_port *port)
{
	port->fec_active = ETHTOOL_FEC_RS;
}

int simnic_fec_parse(const char *s, u32 *fec)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fec_names); i++) {
		if (!strcmp(s, fec_names[i].name)) {
			*fec = fec_names[i].fec;
			return 0;
		}
	}
	return -EINVAL;
}

const char *simnic_fec_name(u32 fec)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fec_names); i++)
		if (fec_names[i].fec == fec)
			return fec_names[i].name;
	return "?";
}

/* phy_corrected_bits is the sum of its per-lane counters (capture 16). */
u64 simnic_corrected_bits(struct simnic_port *port, u64 now)
{
	u64 sum = 0;
	int l;

	for (l = 0; l < SIMNIC_FEC_LANES; l++)
		sum += simnic_ctr_value(port, C_RX_ERR_LANE0_PHY + l, now);
	return sum;
}

/* n modelled firmware register accesses (PPCNT or PPLM), fw.c. */
static void simnic_reg_reads(struct simnic_port *port, int n)
{
	while (n--)
		simnic_fw_delay_reg(port);
}

/*
 * get_fec_supported_advertised(): a 100G port supports no FEC, BASE-R and
 * RS; the advertised bit is the active mode's.
 */
void simnic_fec_link_modes(struct simnic_port *port,
			   struct ethtool_link_ksettings *ks)
{
	u32 mode = READ_ONCE(port->fec_active);

	ethtool_link_ksettings_add_link_mode(ks, supported, FEC_NONE);
	ethtool_link_ksettings_add_link_mode(ks, supported, FEC_BASER);
	ethtool_link_ksettings_add_link_mode(ks, supported, FEC_RS);
	if (mode == ETHTOOL_FEC_OFF)
		ethtool_link_ksettings_add_link_mode(ks, advertising, FEC_NONE);
	else if (mode == ETHTOOL_FEC_BASER)
		ethtool_link_ksettings_add_link_mode(ks, advertising, FEC_BASER);
	else if (mode == ETHTOOL_FEC_RS)
		ethtool_link_ksettings_add_link_mode(ks, advertising, FEC_RS);
	else
		ethtool_link_ksettings_add_link_mode(ks, advertising, FEC_LLRS);
}

/* mlx5e_get_fecparam(): PPLM's active mode; configured = active here. */
int simnic_get_fecparam(struct net_device *dev, struct ethtool_fecparam *fec)
{
	struct simnic_port *port = netdev_priv(dev);

	simnic_reg_reads(port, 1);
	fec->active_fec = READ_ONCE(port->fec_active);
	fec->fec = fec->active_fec;
	return 0;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 13, 0)
/*
 * mlx5e_stats_fec_get(): nothing without FEC; corrected bits from the
 * statistical group; RS and LLRS modes report block totals only, BASE-R
 * (FireCode) per lane, which the core sums into the total.
 */
void simnic_get_fec_stats(struct net_device *dev,
			  struct ethtool_fec_stats *stats)
{
	struct simnic_port *port = netdev_priv(dev);
	u32 mode = READ_ONCE(port->fec_active);
	u64 now;
	int l;

	simnic_reg_reads(port, 1); /* PPLM: the active mode */
	if (mode == ETHTOOL_FEC_OFF)
		return;
	simnic_reg_reads(port, 2); /* PPCNT statistical and physical groups */
	spin_lock_bh(&port->lock);
	now = simnic_now();
	stats->corrected_bits.total = simnic_corrected_bits(port, now);
	if (mode == ETHTOOL_FEC_BASER) {
		for (l = 0; l < SIMNIC_FEC_LANES; l++) {
			stats->corrected_blocks.lanes[l] = simnic_ctr_value(
				port, C_FC_FEC_CORRECTED_LANE0 + l, now);
			stats->uncorrectable_blocks.lanes[l] = simnic_ctr_value(
				port, C_FC_FEC_UNCORRECTABLE_LANE0 + l, now);
		}
	} else {
		stats->corrected_blocks.total =
			simnic_ctr_value(port, C_RS_FEC_CORRECTED_BLOCKS, now);
		stats->uncorrectable_blocks.total = simnic_ctr_value(
			port, C_RS_FEC_UNCORRECTABLE_BLOCKS, now);
	}
	spin_unlock_bh(&port->lock);
}

/* mlx5e_stats_eth_phy_get(): a_symbol_error_during_carrier (PPCNT 802.3). */
void simnic_get_eth_phy_stats(struct net_device *dev,
			      struct ethtool_eth_phy_stats *stats)
{
	struct simnic_port *port = netdev_priv(dev);

	simnic_reg_reads(port, 1);
	spin_lock_bh(&port->lock);
	stats->SymbolErrorDuringCarrier =
		simnic_ctr_value(port, C_RX_SYMBOL_ERR_PHY, simnic_now());
	spin_unlock_bh(&port->lock);
}

/* mlx5e_stats_eth_mac_get(): the 802.3 group ethtool -S shows as *_phy. */
void simnic_get_eth_mac_stats(struct net_device *dev,
			      struct ethtool_eth_mac_stats *stats)
{
	struct simnic_port *port = netdev_priv(dev);
	u64 now;

	simnic_reg_reads(port, 1);
	spin_lock_bh(&port->lock);
	now = simnic_now();
	stats->FramesTransmittedOK = simnic_sum_prio(port, SP_TX_PACKETS, now);
	stats->FramesReceivedOK = simnic_sum_prio(port, SP_RX_PACKETS, now);
	stats->FrameCheckSequenceErrors =
		simnic_ctr_value(port, C_RX_CRC_ERRORS_PHY, now);
	stats->OctetsTransmittedOK = simnic_sum_prio(port, SP_TX_BYTES, now);
	stats->OctetsReceivedOK = simnic_sum_prio(port, SP_RX_BYTES, now);
	spin_unlock_bh(&port->lock);
}
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
/* mlx5e_get_link_ext_stats(): PPCNT physical layer link_down_events. */
void simnic_get_link_ext_stats(struct net_device *dev,
			       struct ethtool_link_ext_stats *stats)
{
	struct simnic_port *port = netdev_priv(dev);

	simnic_reg_reads(port, 1);
	spin_lock_bh(&port->lock);
	stats->link_down_events =
		simnic_ctr_value(port, C_LINK_DOWN_EVENTS_PHY, simnic_now());
	spin_unlock_bh(&port->lock);
}
#endif
