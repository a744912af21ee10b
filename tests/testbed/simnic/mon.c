// SPDX-License-Identifier: GPL-2.0
/*
 * DCB notification observer for tests: a kernel NETLINK_ROUTE socket bound
 * to the RTNLGRP_DCB multicast group records every RTM_GETDCB/RTM_SETDCB the
 * kernel multicasts, so a guest without a netlink listener tool can check
 * which changes were notified.  Read /sys/kernel/debug/simnic/<if>/dcb_events:
 * one "seq type cmd ifname" line per message about that netdev, among the
 * last SIMNIC_MON_EVENTS messages of all devices.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/version.h>
#include <linux/seq_file.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "simnic.h"

#define SIMNIC_MON_EVENTS 64

struct simnic_mon_event {
	u64 seq;
	u16 type;
	u8 cmd;
	char ifname[IFNAMSIZ];
};

static struct socket *mon_sock;
static DEFINE_SPINLOCK(mon_lock);
static struct simnic_mon_event mon_ev[SIMNIC_MON_EVENTS];
static u64 mon_seq;

static void mon_record(const struct nlmsghdr *nlh)
{
	const struct dcbmsg *dcb = nlmsg_data(nlh);
	const struct nlattr *ifname;
	struct simnic_mon_event *ev;
	unsigned long flags;

	if (nlh->nlmsg_len < nlmsg_msg_size(sizeof(*dcb)))
		return;
	spin_lock_irqsave(&mon_lock, flags);
	ev = &mon_ev[mon_seq % SIMNIC_MON_EVENTS];
	ev->seq = ++mon_seq;
	ev->type = nlh->nlmsg_type;
	ev->cmd = dcb->cmd;
	strscpy(ev->ifname, "?", IFNAMSIZ);
	ifname = nlmsg_find_attr(nlh, sizeof(*dcb), DCB_ATTR_IFNAME);
	if (ifname)
		/* nla_strscpy() is 5.11's rename of nla_strlcpy() */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
		nla_strlcpy(ev->ifname, ifname, IFNAMSIZ);
#else
		nla_strscpy(ev->ifname, ifname, IFNAMSIZ);
#endif
	spin_unlock_irqrestore(&mon_lock, flags);
}

/* Runs in the sender's context, possibly atomic: parse and drop. */
static void mon_data_ready(struct sock *sk)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&sk->sk_receive_queue)) != NULL) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)skb->data;
		int len = skb->len;

		while (nlmsg_ok(nlh, len)) {
			if (nlh->nlmsg_type == RTM_GETDCB ||
			    nlh->nlmsg_type == RTM_SETDCB)
				mon_record(nlh);
			nlh = nlmsg_next(nlh, &len);
		}
		consume_skb(skb);
	}
}

static const char *cmd_name(u8 cmd)
{
	switch (cmd) {
	case DCB_CMD_IEEE_SET:
		return "IEEE_SET";
	case DCB_CMD_IEEE_GET:
		return "IEEE_GET";
	case DCB_CMD_IEEE_DEL:
		return "IEEE_DEL";
	case DCB_CMD_SDCBX:
		return "SDCBX";
	case DCB_CMD_CEE_GET:
		return "CEE_GET";
	}
	return "OTHER";
}

/* The events whose DCB_ATTR_IFNAME is the port's current name. */
int simnic_mon_show(struct seq_file *m, void *v)
{
	struct simnic_port *port = m->private;
	char name[IFNAMSIZ];
	unsigned long flags;
	u64 first, s;

	rtnl_lock();
	strscpy(name, port->netdev->name, IFNAMSIZ);
	rtnl_unlock();

	spin_lock_irqsave(&mon_lock, flags);
	first = mon_seq > SIMNIC_MON_EVENTS ? mon_seq - SIMNIC_MON_EVENTS + 1 : 1;
	for (s = first; s <= mon_seq; s++) {
		const struct simnic_mon_event *e =
			&mon_ev[(s - 1) % SIMNIC_MON_EVENTS];

		if (strcmp(e->ifname, name))
			continue;
		seq_printf(m, "%llu %s %s %s\n", e->seq,
			   e->type == RTM_SETDCB ? "RTM_SETDCB" : "RTM_GETDCB",
			   cmd_name(e->cmd), e->ifname);
	}
	spin_unlock_irqrestore(&mon_lock, flags);
	return 0;
}

int simnic_mon_init(void)
{
	struct sockaddr_nl addr = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1U << (RTNLGRP_DCB - 1),
	};
	int err;

	err = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE,
			       &mon_sock);
	if (err)
		return err;
	mon_sock->sk->sk_data_ready = mon_data_ready;
	err = kernel_bind(mon_sock, (struct sockaddr *)&addr, sizeof(addr));
	if (err) {
		sock_release(mon_sock);
		mon_sock = NULL;
	}
	return err;
}

/* netlink_release() waits for broadcasts in flight, then no callback runs. */
void simnic_mon_exit(void)
{
	if (mon_sock)
		sock_release(mon_sock);
	mon_sock = NULL;
}
