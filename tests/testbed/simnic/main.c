// SPDX-License-Identifier: GPL-2.0
/*
 * simnic: module parameters, ports (platform device + netdev), data path.
 */
#include <linux/delay.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/sched/signal.h>

#include "simnic.h"

static bool pci = true;
module_param(pci, bool, 0444);
MODULE_PARM_DESC(pci, "Put the ports on a simulated PCI bus as 15b3:101d functions (default 1; 0: platform devices)");

unsigned int simnic_num_ports = 2;
module_param_named(num_ports, simnic_num_ports, uint, 0444);
MODULE_PARM_DESC(num_ports, "Number of simulated ports (1-16, default 2)");

static char *ifname = "sim%d";
module_param(ifname, charp, 0444);
MODULE_PARM_DESC(ifname, "Netdev name format (default sim%d)");

char *simnic_fw_ver = "22.39.1002";
module_param_named(fw_ver, simnic_fw_ver, charp, 0444);
MODULE_PARM_DESC(fw_ver, "Firmware version reported by ethtool and RDMA");

char *simnic_drv_name = "mlx5_core";
module_param_named(drv_name, simnic_drv_name, charp, 0444);
MODULE_PARM_DESC(drv_name, "Driver name reported by ethtool -i (default mlx5_core)");

bool simnic_cap_storm = true;
module_param_named(cap_stall_detect, simnic_cap_storm, bool, 0444);
MODULE_PARM_DESC(cap_stall_detect,
		 "pfcc_mask && stall_detect: storm counters and the PFC prevention tunable");

bool simnic_cap_sbcam = true;
module_param_named(cap_sbcam, simnic_cap_sbcam, bool, 0444);
MODULE_PARM_DESC(cap_sbcam, "sbcam_reg: rx_prioN_buf_discard/cong_discard/marked");

bool simnic_cap_buffer = true;
module_param_named(cap_buffer, simnic_cap_buffer, bool, 0444);
MODULE_PARM_DESC(cap_buffer, "MLX5_BUFFER_SUPPORTED: dcb buffer, cable length, qos/ buffer files");

bool simnic_cap_dscp = true;
module_param_named(cap_dscp, simnic_cap_dscp, bool, 0444);
MODULE_PARM_DESC(cap_dscp, "MLX5_DSCP_SUPPORTED: DSCP APP entries (trust dscp)");

bool simnic_cap_rx_buffer_fullness = true;
module_param_named(cap_rx_buffer_fullness, simnic_cap_rx_buffer_fullness, bool, 0444);
MODULE_PARM_DESC(cap_rx_buffer_fullness, "PCAM rx_buffer_fullness_counters: rx_buffer_passed_thres_phy");

bool simnic_pfc_stats_cache = true;
module_param_named(pfc_stats_cache, simnic_pfc_stats_cache, bool, 0444);
MODULE_PARM_DESC(pfc_stats_cache,
		 "DCB PFC requests/indications as of the last ethtool -S, like mlx5 (default 1)");

unsigned int simnic_link_flap_ms;
module_param_named(link_flap_ms, simnic_link_flap_ms, uint, 0444);
MODULE_PARM_DESC(link_flap_ms,
		 "Carrier-down time when a PFC change toggles the link (0 = immediate)");

/*
 * Remediation fault tests: every configuration write the exporter makes (ieee_setets,
 * ieee_setpfc, dcbnl_setbuffer, the ecn enable files) sleeps this long first, so a test can
 * SIGKILL the exporter between two of its writes.  The sleep is killable and a writer killed
 * during it returns -EINTR before touching the port: with an uninterruptible sleep the kill
 * waited for the write and the write landed, so "killed before this write" could not be staged.
 * ecn_write_latency_ms, when set, replaces it for the ecn enable files: a long one holds the
 * writer after its DCB write until the test kills it.  0644: settable while loaded.
 */
unsigned int simnic_write_latency_ms;
module_param_named(write_latency_ms, simnic_write_latency_ms, uint, 0644);
MODULE_PARM_DESC(write_latency_ms, "Delay of each DCB set and ecn enable write, ms (default 0)");

static unsigned int ecn_write_latency_ms;
module_param(ecn_write_latency_ms, uint, 0644);
MODULE_PARM_DESC(ecn_write_latency_ms,
		 "Delay of each ecn enable write, ms, instead of write_latency_ms (0 = that one)");

int simnic_write_latency(bool ecn)
{
	unsigned int ms = READ_ONCE(simnic_write_latency_ms);
	unsigned int ecn_ms = READ_ONCE(ecn_write_latency_ms);

	if (ecn && ecn_ms)
		ms = ecn_ms;
	if (!ms)
		return 0;
	schedule_timeout_killable(msecs_to_jiffies(ms));
	return fatal_signal_pending(current) ? -EINTR : 0;
}

static bool dcbx_host = true;
module_param(dcbx_host, bool, 0444);
MODULE_PARM_DESC(dcbx_host, "Firmware DCBX starts in HOST (OS controlled) mode (default 1)");

static bool trust_dscp;
module_param(trust_dscp, bool, 0444);
MODULE_PARM_DESC(trust_dscp, "Firmware trust state is DSCP at load: all 64 DSCP APP entries (default 0)");

static bool link_pause = true;
module_param(link_pause, bool, 0444);
MODULE_PARM_DESC(link_pause, "Link-level (global) pause rx/tx on at load (default 1)");

static unsigned int ecn_prio_mask = 0xff;
module_param(ecn_prio_mask, uint, 0444);
MODULE_PARM_DESC(ecn_prio_mask, "ecn/roce_{np,rp}/enable bitmap at load (default 0xff)");

static unsigned int cable_len = 7;
module_param(cable_len, uint, 0444);
MODULE_PARM_DESC(cable_len, "Cable length in meters (PFC delay, default 7)");

static unsigned int port_buffer_size = 262016;
module_param(port_buffer_size, uint, 0444);
MODULE_PARM_DESC(port_buffer_size, "Receive buffer total_size in bytes (default 262016)");

static unsigned int stall_timeout_ms = 8000;
module_param(stall_timeout_ms, uint, 0444);
MODULE_PARM_DESC(stall_timeout_ms, "PFC stall prevention critical timeout at load (ms, 0 = off)");

static unsigned long storm_pause_rate = 6000;
module_param(storm_pause_rate, ulong, 0444);
MODULE_PARM_DESC(storm_pause_rate, "Default pause frames per second during a storm");

struct simnic_port *simnic_ports[SIMNIC_MAX_PORTS];

static const struct net_device_ops simnic_netdev_ops;

/* Counters advance only while the port is administratively up with carrier. */
void simnic_update_running(struct simnic_port *port)
{
	bool run = netif_running(port->netdev) && port->cable;
	bool changed;
	u64 now = simnic_now();

	spin_lock_bh(&port->lock);
	changed = run != port->running;
	if (changed) {
		simnic_ctr_fold_all(port, now);
		if (!run)
			simnic_storm_stop_all(port, now);
		port->running = run;
	}
	spin_unlock_bh(&port->lock);
	if (changed)
		simnic_rdma_port_event(port);
}

bool simnic_is_port(const struct net_device *dev)
{
	return dev->netdev_ops == &simnic_netdev_ops;
}

bool simnic_port_active(struct simnic_port *port)
{
	return netif_running(port->netdev) && netif_carrier_ok(port->netdev);
}

static void simnic_carrier(struct simnic_port *port)
{
	bool on = netif_running(port->netdev) && port->cable;

	if (on && !netif_carrier_ok(port->netdev)) {
		netif_carrier_on(port->netdev);
	} else if (!on && netif_carrier_ok(port->netdev)) {
		netif_carrier_off(port->netdev);
		spin_lock_bh(&port->lock);
		port->ctr[C_LINK_DOWN_EVENTS_PHY].base++;
		spin_unlock_bh(&port->lock);
	}
	simnic_update_running(port);
}

/* Caller holds RTNL, which serialises all carrier changes. */
void simnic_set_cable(struct simnic_port *port, bool up)
{
	ASSERT_RTNL();
	port->flap_pending = false;
	port->cable = up;
	simnic_carrier(port);
}

static void simnic_flap_work(struct work_struct *work)
{
	struct simnic_port *port =
		container_of(to_delayed_work(work), struct simnic_port, flap_work);

	rtnl_lock();
	if (port->flap_pending) {
		port->flap_pending = false;
		port->cable = true;
		simnic_carrier(port);
	}
	rtnl_unlock();
}

/* mlx5_toggle_port_link(): a PFC change takes the port down and up again. */
void simnic_toggle_link(struct simnic_port *port)
{
	ASSERT_RTNL();
	if (!port->cable || !netif_running(port->netdev))
		return;
	port->cable = false;
	simnic_carrier(port);
	if (simnic_link_flap_ms && !port->dying) {
		port->flap_pending = true;
		schedule_delayed_work(&port->flap_work,
				      msecs_to_jiffies(simnic_link_flap_ms));
	} else {
		port->cable = true;
		simnic_carrier(port);
	}
}

static int simnic_open(struct net_device *dev)
{
	struct simnic_port *port = netdev_priv(dev);

	netif_start_queue(dev);
	simnic_carrier(port);
	return 0;
}

static int simnic_stop(struct net_device *dev)
{
	struct simnic_port *port = netdev_priv(dev);

	netif_stop_queue(dev);
	simnic_carrier(port);
	return 0;
}

/* The wire priority of a frame is its VLAN PCP; untagged frames use 0. */
static int simnic_skb_prio(struct sk_buff *skb)
{
	u16 tci;

	if (!vlan_get_tag(skb, &tci))
		return (tci & VLAN_PRIO_MASK) >> VLAN_PRIO_SHIFT;
	return 0;
}

static netdev_tx_t simnic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct simnic_port *port = netdev_priv(dev);
	int prio = simnic_skb_prio(skb);
	u64 now;

	if (simnic_tx_fw_lldp(port, skb))
		return NETDEV_TX_OK;
	now = simnic_now();
	spin_lock(&port->lock);
	if (port->storm[SIMNIC_RX][prio].active || !port->running) {
		/* paused by the peer: the frame never leaves the port */
		simnic_ctr_add(port, C_TX_DISCARDS_PHY, 1, now);
	} else {
		simnic_ctr_add(port, C_PRIO(prio, SP_TX_PACKETS), 1, now);
		simnic_ctr_add(port, C_PRIO(prio, SP_TX_BYTES), skb->len, now);
	}
	spin_unlock(&port->lock);
	consume_skb(skb);
	return NETDEV_TX_OK;
}

static void simnic_get_stats64(struct net_device *dev,
			       struct rtnl_link_stats64 *s)
{
	struct simnic_port *port = netdev_priv(dev);
	u64 now = simnic_now();

	spin_lock_bh(&port->lock);
	s->rx_packets = simnic_sum_prio(port, SP_RX_PACKETS, now);
	s->rx_bytes = simnic_sum_prio(port, SP_RX_BYTES, now);
	s->tx_packets = simnic_sum_prio(port, SP_TX_PACKETS, now);
	s->tx_bytes = simnic_sum_prio(port, SP_TX_BYTES, now);
	s->rx_dropped = simnic_ctr_value(port, C_RX_DISCARDS_PHY, now);
	s->rx_missed_errors = simnic_ctr_value(port, C_RX_OUT_OF_BUFFER, now);
	s->rx_crc_errors = simnic_ctr_value(port, C_RX_CRC_ERRORS_PHY, now);
	s->rx_errors = s->rx_crc_errors;
	s->tx_aborted_errors = simnic_ctr_value(port, C_TX_DISCARDS_PHY, now);
	s->tx_errors = s->tx_aborted_errors;
	spin_unlock_bh(&port->lock);
}

static int simnic_change_mtu(struct net_device *dev, int mtu)
{
	dev->mtu = mtu;
	return 0;
}

static const struct net_device_ops simnic_netdev_ops = {
	.ndo_open = simnic_open,
	.ndo_stop = simnic_stop,
	.ndo_start_xmit = simnic_xmit,
	.ndo_get_stats64 = simnic_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_change_mtu = simnic_change_mtu,
};

static void simnic_port_defaults(struct simnic_port *port)
{
	static const u32 rp_defaults[SIMNIC_RP_PARAMS] = {
		/* typical ConnectX firmware defaults (mlxconfig) */
		0, 1, 300, 32767, 1, 0, 5, 50, 11, 50, 1, 0, 1019, 1, 4, 1023,
	};
	static const u32 np_defaults[SIMNIC_NP_PARAMS] = { 4, 48, 6 };
	int i;

	port->cable = true;
	port->storm_pause_rate = storm_pause_rate;
	port->ecn_en[SIMNIC_ECN_RP] = ecn_prio_mask & 0xff;
	port->ecn_en[SIMNIC_ECN_NP] = ecn_prio_mask & 0xff;
	memcpy(port->rp_param, rp_defaults, sizeof(rp_defaults));
	memcpy(port->np_param, np_defaults, sizeof(np_defaults));
	port->cable_len = cable_len;
	port->total_size = port_buffer_size & ~127u;
	port->buffer_size[0] = port->total_size;
	for (i = 0; i < SIMNIC_NUM_DSCP; i++)
		port->dscp2prio[i] = i >> 3; /* firmware default QPDPM */
	port->trust_dscp = trust_dscp && simnic_cap_dscp;
	port->dcbx_host = dcbx_host;
	port->dcbx_cap = DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE |
			 (dcbx_host ? DCB_CAP_DCBX_HOST : 0);
	port->rx_pause = link_pause;
	port->tx_pause = link_pause;
	simnic_set_stall(port, min_t(unsigned int, stall_timeout_ms, 8000));
}

static void simnic_port_destroy(struct simnic_port *port)
{
	struct platform_device *pdev = port->pdev;
	struct pci_dev *pcidev = port->pcidev;
	struct net_device *dev = port->netdev;

	rtnl_lock();
	port->dying = true;
	port->flap_pending = false;
	if (port->registered)
		simnic_dcb_cleanup(port);
	rtnl_unlock();
	cancel_delayed_work_sync(&port->flap_work);
	if (port->registered) {
		simnic_sysfs_remove(port);
		unregister_netdev(dev);
	}
	cancel_delayed_work_sync(&port->ib_event_work);
	free_netdev(dev);
	if (pdev)
		platform_device_unregister(pdev);
	pci_dev_put(pcidev);
}

static struct simnic_port *simnic_port_create(int index)
{
	struct platform_device *pdev;
	struct pci_dev *pcidev;
	struct device *parent;
	struct simnic_port *port;
	struct net_device *dev;
	u8 mac[ETH_ALEN] = { 0x02, 0x53, 0x49, 0x4d, 0x00, 0x00 };

	pcidev = simnic_pci_dev(index);
	if (pcidev) {
		pdev = NULL;
		parent = &pcidev->dev;
	} else {
		pdev = platform_device_register_simple("simnic", index, NULL, 0);
		if (IS_ERR(pdev))
			return ERR_CAST(pdev);
		parent = &pdev->dev;
	}

	dev = alloc_netdev(sizeof(*port), ifname, NET_NAME_ENUM, ether_setup);
	if (!dev) {
		if (pdev)
			platform_device_unregister(pdev);
		pci_dev_put(pcidev);
		return ERR_PTR(-ENOMEM);
	}
	SET_NETDEV_DEV(dev, parent);
	port = netdev_priv(dev);
	port->netdev = dev;
	port->pdev = pdev;
	port->pcidev = pcidev;
	port->parent = parent;
	port->index = index;
	spin_lock_init(&port->lock);
	simnic_fw_latency_init(port);
	simnic_link_init(port);
	INIT_DELAYED_WORK(&port->flap_work, simnic_flap_work);
	INIT_DELAYED_WORK(&port->ib_event_work, simnic_rdma_event_work);
	simnic_port_defaults(port);
	simnic_dcb_init(port);

	mac[5] = index;
	eth_hw_addr_set(dev, mac);
	dev->netdev_ops = &simnic_netdev_ops;
	dev->ethtool_ops = &simnic_ethtool_ops;
	dev->dcbnl_ops = &simnic_dcbnl_ops;
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = 9978; /* mlx5e max MTU */
	netif_carrier_off(dev);

	return port;
}

static int simnic_port_register(struct simnic_port *port)
{
	int err;

	err = register_netdev(port->netdev);
	if (err)
		return err;
	port->registered = true;
	strscpy(port->name, port->netdev->name, IFNAMSIZ);

	/* mlx5e_dcbnl_init_app(): firmware trust dscp -> all 64 entries */
	rtnl_lock();
	if (port->trust_dscp) {
		struct dcb_app app = { .selector = IEEE_8021QAZ_APP_SEL_DSCP };
		int d;

		for (d = 0; d < SIMNIC_NUM_DSCP; d++) {
			app.protocol = d;
			app.priority = port->dscp2prio[d];
			dcb_ieee_setapp(port->netdev, &app);
		}
		port->dscp_app_cnt = SIMNIC_NUM_DSCP;
	}
	rtnl_unlock();

	return simnic_sysfs_create(port);
}

static int simnic_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct simnic_port *port;

	if (!simnic_is_port(dev))
		return NOTIFY_DONE;
	port = netdev_priv(dev);
	if (event == NETDEV_CHANGENAME)
		simnic_ctl_port_rename(port);
	else
		simnic_rdma_netdev_event(port, event, ptr);
	return NOTIFY_DONE;
}

static struct notifier_block simnic_netdev_nb = {
	.notifier_call = simnic_netdev_event,
};
static bool simnic_nb_registered;

static void simnic_cleanup(void)
{
	int i;

	if (simnic_nb_registered)
		unregister_netdevice_notifier(&simnic_netdev_nb);
	simnic_nb_registered = false;
	simnic_ctl_exit();
	simnic_cc_params_exit();
	simnic_rdma_exit();
	simnic_mon_exit();
	for (i = SIMNIC_MAX_PORTS - 1; i >= 0; i--) {
		if (!simnic_ports[i])
			continue;
		simnic_port_destroy(simnic_ports[i]);
		simnic_ports[i] = NULL;
	}
	simnic_pci_exit();
}

static int __init simnic_init(void)
{
	int i, err;

	if (simnic_num_ports < 1 || simnic_num_ports > SIMNIC_MAX_PORTS) {
		pr_err("simnic: num_ports must be 1..%d\n", SIMNIC_MAX_PORTS);
		return -EINVAL;
	}
	if (!ifname || !strchr(ifname, '%') || strlen(ifname) >= IFNAMSIZ - 2) {
		pr_err("simnic: ifname must be a short format with %%d\n");
		return -EINVAL;
	}
	simnic_ctr_names_init();
	err = simnic_mon_init();
	if (err)
		return err;
	if (pci) {
		err = simnic_pci_init();
		if (err)
			pr_warn("simnic: no simulated PCI bus (%d), using platform devices\n",
				err);
	}

	for (i = 0; i < simnic_num_ports; i++) {
		struct simnic_port *port = simnic_port_create(i);

		if (IS_ERR(port)) {
			err = PTR_ERR(port);
			goto fail;
		}
		simnic_ports[i] = port;
		err = simnic_port_register(port);
		if (err)
			goto fail;
	}
	err = simnic_rdma_init();
	if (err)
		goto fail;
	err = simnic_ctl_init();
	if (err)
		goto fail;
	simnic_cc_params_init();
	err = register_netdevice_notifier(&simnic_netdev_nb);
	if (err)
		goto fail;
	simnic_nb_registered = true;
	pr_info("simnic: %u simulated mlx5 port(s) ready\n", simnic_num_ports);
	return 0;

fail:
	simnic_cleanup();
	return err;
}

static void __exit simnic_exit(void)
{
	simnic_cleanup();
}

module_init(simnic_init);
module_exit(simnic_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("roce_qos_exporter testbed");
MODULE_DESCRIPTION("Simulated ConnectX (mlx5) NIC: DCB, ethtool stats, MOFED sysfs, RDMA counters");
