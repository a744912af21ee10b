// SPDX-License-Identifier: GPL-2.0
/*
 * Received frames and firmware LLDP.
 *
 * simnic_rx_frame() hands a whole Ethernet frame (without FCS) to the host
 * stack the way mlx5e's receive path does: an skb holding the frame,
 * eth_type_trans(), the frame counted in rx_prio<PCP>_packets/bytes (so in
 * ip -s link and ethtool -S), then netif_rx().  There is no receive filter:
 * every frame is delivered, as in promiscuous mode.
 *
 * Firmware LLDP (fw_lldp on): ConnectX firmware that runs its own LLDP/DCBX
 * agent (mlxconfig LLDP_NB_RX_MODE, LLDP_NB_DCBX) consumes received LLDP
 * frames before the host sees them, which is why lldpd on such a host
 * finds no neighbour.  While on, frames of ethertype 0x88cc are counted in
 * fw_lldp_rx and never reach the stack or the port's rx counters; LLDP
 * frames the host transmits are dropped too (fw_lldp_tx), so the switch
 * hears only the firmware's agent.
 */
#include <linux/if_vlan.h>

#include "simnic.h"

static u16 frame_ethertype(const u8 *frame, unsigned int len)
{
	return len >= ETH_HLEN ? (frame[12] << 8) | frame[13] : 0;
}

/* The wire priority of a received frame: its outer VLAN PCP, 0 untagged. */
static int frame_prio(const u8 *frame, unsigned int len)
{
	if (len >= VLAN_ETH_HLEN && frame_ethertype(frame, len) == ETH_P_8021Q)
		return frame[14] >> 5;
	return 0;
}

int simnic_rx_frame(struct simnic_port *port, const u8 *frame,
		    unsigned int len)
{
	struct net_device *dev = port->netdev;
	int prio = frame_prio(frame, len);
	struct sk_buff *skb;
	u64 now;

	if (!simnic_port_active(port))
		return -ENETDOWN;
	if (READ_ONCE(port->fw_lldp) &&
	    frame_ethertype(frame, len) == ETH_P_LLDP) {
		atomic64_inc(&port->fw_lldp_rx);
		return 0;
	}
	skb = netdev_alloc_skb_ip_align(dev, len);
	if (!skb)
		return -ENOMEM;
	skb_put_data(skb, frame, len);

	spin_lock_bh(&port->lock);
	now = simnic_now();
	simnic_ctr_add(port, C_PRIO(prio, SP_RX_PACKETS), 1, now);
	simnic_ctr_add(port, C_PRIO(prio, SP_RX_BYTES), len, now);
	spin_unlock_bh(&port->lock);
	atomic64_inc(&port->rx_frames);

	skb->protocol = eth_type_trans(skb, dev);
	/* process context: before 5.18 only netif_rx_ni() runs the softirq */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 18, 0)
	netif_rx_ni(skb);
#else
	netif_rx(skb);
#endif
	return 0;
}

/* ndo_start_xmit: true when firmware LLDP takes the frame (it is freed). */
bool simnic_tx_fw_lldp(struct simnic_port *port, struct sk_buff *skb)
{
	struct ethhdr _eth;
	const struct ethhdr *eth;

	if (!READ_ONCE(port->fw_lldp))
		return false;
	eth = skb_header_pointer(skb, 0, sizeof(_eth), &_eth);
	if (!eth || eth->h_proto != htons(ETH_P_LLDP))
		return false;
	atomic64_inc(&port->fw_lldp_tx);
	consume_skb(skb);
	return true;
}

void simnic_rx_reset(struct simnic_port *port)
{
	atomic64_set(&port->rx_frames, 0);
	atomic64_set(&port->fw_lldp_rx, 0);
	atomic64_set(&port->fw_lldp_tx, 0);
}
