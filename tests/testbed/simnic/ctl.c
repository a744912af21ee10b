// SPDX-License-Identifier: GPL-2.0
/*
 * Control file /sys/kernel/debug/simnic/<ifname>/ctl.
 *
 * Write: commands separated by newlines or ';', '#' starts a comment.  The
 * whole write is parsed and validated first; nothing is applied unless every
 * command is valid.  Commands then run in order under RTNL; a state error
 * during that pass (e.g. a storm that is already running) stops there and
 * is returned.  Changes made here do not send DCB netlink notifications,
 * like a change made by firmware or by the DCBX peer; "notify" sends one.
 *
 * Read: "# ..." state lines, then one "name value rate" line per counter.
 */
#include <linux/ctype.h>
#include <linux/glob.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "simnic.h"

#define CTL_MAX_WRITE 4096
#define CTL_MAX_ARGS 12
#define CTL_DEFAULT_PKT_BYTES 1024

static struct dentry *simnic_dbg_root;

struct ctl_ctx {
	struct simnic_port *port;
	bool apply;
	char *err; /* port->ctl_err */
};

#define ctl_fail(c, code, fmt, ...)                                          \
	({                                                                   \
		snprintf((c)->err, sizeof((c)->port->ctl_err), fmt,          \
			 ##__VA_ARGS__);                                     \
		code;                                                        \
	})

static int parse_u64(struct ctl_ctx *c, const char *s, u64 *v)
{
	if (kstrtou64(s, 0, v))
		return ctl_fail(c, -EINVAL, "bad number '%s'", s);
	return 0;
}

static int parse_range(struct ctl_ctx *c, const char *s, u64 max, u64 *v)
{
	int err = parse_u64(c, s, v);

	if (err)
		return err;
	if (*v > max)
		return ctl_fail(c, -EINVAL, "'%s' out of range 0..%llu", s, max);
	return 0;
}

static int parse_prio(struct ctl_ctx *c, const char *s, int *prio)
{
	u64 v;
	int err = parse_range(c, s, SIMNIC_NUM_PRIO - 1, &v);

	*prio = v;
	return err;
}

static int parse_dir(struct ctl_ctx *c, const char *s, int *dir)
{
	if (!strcmp(s, "rx"))
		*dir = SIMNIC_RX;
	else if (!strcmp(s, "tx"))
		*dir = SIMNIC_TX;
	else
		return ctl_fail(c, -EINVAL, "direction must be rx or tx, not '%s'", s);
	return 0;
}

static int parse_bool(struct ctl_ctx *c, const char *s, bool *b)
{
	if (!strcmp(s, "1") || !strcmp(s, "on"))
		*b = true;
	else if (!strcmp(s, "0") || !strcmp(s, "off"))
		*b = false;
	else
		return ctl_fail(c, -EINVAL, "expected on/off or 1/0, not '%s'", s);
	return 0;
}

/* Eight comma-separated values, each parsed by fn. */
static int parse_list8(struct ctl_ctx *c, const char *s, u8 *out,
		       int (*fn)(struct ctl_ctx *, const char *, u8 *))
{
	char tmp[128], *p = tmp, *tok;
	int n = 0, err;

	if (strscpy(tmp, s, sizeof(tmp)) < 0)
		return ctl_fail(c, -EINVAL, "list too long");
	while ((tok = strsep(&p, ",")) != NULL) {
		if (n >= 8)
			return ctl_fail(c, -EINVAL, "more than 8 values in '%s'", s);
		err = fn(c, tok, &out[n++]);
		if (err)
			return err;
	}
	if (n != 8)
		return ctl_fail(c, -EINVAL, "need 8 comma-separated values, got %d", n);
	return 0;
}

static int item_prio(struct ctl_ctx *c, const char *s, u8 *v)
{
	u64 x;
	int err = parse_range(c, s, 7, &x);

	*v = x;
	return err;
}

static int item_pct(struct ctl_ctx *c, const char *s, u8 *v)
{
	u64 x;
	int err = parse_range(c, s, 100, &x);

	*v = x;
	return err;
}

static int item_tsa(struct ctl_ctx *c, const char *s, u8 *v)
{
	if (!strcmp(s, "strict"))
		*v = IEEE_8021QAZ_TSA_STRICT;
	else if (!strcmp(s, "cbs"))
		*v = IEEE_8021QAZ_TSA_CB_SHAPER;
	else if (!strcmp(s, "ets"))
		*v = IEEE_8021QAZ_TSA_ETS;
	else if (!strcmp(s, "vendor"))
		*v = IEEE_8021QAZ_TSA_VENDOR;
	else
		return ctl_fail(c, -EINVAL, "tsa must be strict|ets|vendor, not '%s'", s);
	return 0;
}

/* set|add|rate <glob> <value> */
static int cmd_counter(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	u64 v, now;
	int i, n = 0, err;

	if (argc != 3)
		return ctl_fail(c, -EINVAL, "usage: %s <counter-glob> <value>", argv[0]);
	err = parse_u64(c, argv[2], &v);
	if (err)
		return err;
	for (i = 0; i < C_NUM; i++)
		n += glob_match(argv[1], simnic_ctr_names[i]);
	if (!n)
		return ctl_fail(c, -EINVAL, "no counter matches '%s'", argv[1]);
	if (!c->apply)
		return 0;

	spin_lock_bh(&port->lock);
	now = simnic_now();
	for (i = 0; i < C_NUM; i++) {
		if (!glob_match(argv[1], simnic_ctr_names[i]))
			continue;
		if (argv[0][0] == 's')
			simnic_ctr_set(port, i, v, now);
		else if (argv[0][0] == 'a')
			simnic_ctr_add(port, i, v, now);
		else
			simnic_ctr_set_rate(port, i, v, now);
	}
	spin_unlock_bh(&port->lock);
	return 0;
}

/* traffic <prio> <rx|tx> <packets/s> [bytes/packet] */
static int cmd_traffic(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	u64 pps, bpp = CTL_DEFAULT_PKT_BYTES, now;
	int prio, dir, err;

	if (argc != 4 && argc != 5)
		return ctl_fail(c, -EINVAL,
				"usage: traffic <prio> <rx|tx> <pps> [bytes-per-packet]");
	err = parse_prio(c, argv[1], &prio) ?: parse_dir(c, argv[2], &dir) ?:
	      parse_range(c, argv[3], 1ULL << 40, &pps);
	if (!err && argc == 5)
		err = parse_range(c, argv[4], 1 << 20, &bpp);
	if (err || !c->apply)
		return err;

	spin_lock_bh(&port->lock);
	now = simnic_now();
	simnic_ctr_set_rate(port, C_PRIO(prio, dir == SIMNIC_RX ? SP_RX_PACKETS :
							    SP_TX_PACKETS),
			    pps, now);
	simnic_ctr_set_rate(port, C_PRIO(prio, dir == SIMNIC_RX ? SP_RX_BYTES :
							    SP_TX_BYTES),
			    pps * bpp, now);
	spin_unlock_bh(&port->lock);
	return 0;
}

/* storm start <prio> <rx|tx> [pause/s] | storm stop <prio|all> [rx|tx] */
static int cmd_storm(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	int prio = -1, dir = -1, err = 0, d, p;
	u64 rate = port->storm_pause_rate, now;
	bool start;

	if (argc < 3)
		return ctl_fail(c, -EINVAL, "usage: storm start|stop <prio> <rx|tx>");
	if (!strcmp(argv[1], "start"))
		start = true;
	else if (!strcmp(argv[1], "stop"))
		start = false;
	else
		return ctl_fail(c, -EINVAL, "storm: expected start or stop");

	if (start) {
		if (argc != 4 && argc != 5)
			return ctl_fail(c, -EINVAL,
					"usage: storm start <prio> <rx|tx> [pause-frames/s]");
		err = parse_prio(c, argv[2], &prio) ?: parse_dir(c, argv[3], &dir);
		if (!err && argc == 5)
			err = parse_range(c, argv[4], 100000000, &rate);
	} else {
		if (argc > 4)
			return ctl_fail(c, -EINVAL, "usage: storm stop <prio|all> [rx|tx]");
		if (strcmp(argv[2], "all"))
			err = parse_prio(c, argv[2], &prio);
		if (!err && argc == 4)
			err = parse_dir(c, argv[3], &dir);
	}
	if (err || !c->apply)
		return err;

	spin_lock_bh(&port->lock);
	now = simnic_now();
	if (start) {
		err = simnic_storm_start(port, prio, dir, rate, now);
		if (err == -EBUSY)
			ctl_fail(c, 0, "storm on prio %d %s already running",
				 prio, argv[3]);
		else if (err)
			ctl_fail(c, 0, "port is down, no storm");
	} else {
		for (d = 0; d < 2; d++)
			for (p = 0; p < SIMNIC_NUM_PRIO; p++)
				if ((prio < 0 || p == prio) && (dir < 0 || d == dir))
					simnic_storm_stop(port, p, d, now);
	}
	spin_unlock_bh(&port->lock);
	return err;
}

/* ets [prio_tc <8>] [tsa <8>] [bw <8>]: fields not given keep their value */
static int cmd_ets(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	u8 prio_tc[8], tsa[8], bw[8];
	bool has_prio_tc = false, has_tsa = false, has_bw = false;
	struct ieee_ets ets;
	int i, err;

	if (argc < 3 || !(argc & 1))
		return ctl_fail(c, -EINVAL,
				"usage: ets [prio_tc a,..] [tsa t,..] [bw b,..]");
	for (i = 1; i < argc; i += 2) {
		if (!strcmp(argv[i], "prio_tc")) {
			err = parse_list8(c, argv[i + 1], prio_tc, item_prio);
			has_prio_tc = true;
		} else if (!strcmp(argv[i], "tsa")) {
			err = parse_list8(c, argv[i + 1], tsa, item_tsa);
			has_tsa = true;
		} else if (!strcmp(argv[i], "bw")) {
			err = parse_list8(c, argv[i + 1], bw, item_pct);
			has_bw = true;
		} else {
			err = ctl_fail(c, -EINVAL, "ets: unknown field '%s'", argv[i]);
		}
		if (err)
			return err;
	}
	if (!c->apply)
		return 0;
	/* the result is validated against the state at apply time */
	simnic_dcb_getets(port, &ets);
	if (has_prio_tc)
		memcpy(ets.prio_tc, prio_tc, 8);
	if (has_tsa)
		memcpy(ets.tc_tsa, tsa, 8);
	if (has_bw)
		memcpy(ets.tc_tx_bw, bw, 8);
	err = simnic_dcb_validate_ets(&ets);
	if (err)
		return ctl_fail(c, err, "ets rejected (bandwidth sum or tsa)");
	simnic_dcb_apply_ets(port, &ets);
	return 0;
}

/* app add <dscp> <prio> | app del <dscp> [prio] */
static int cmd_app(struct ctl_ctx *c, int argc, char **argv)
{
	struct dcb_app app = { .selector = IEEE_8021QAZ_APP_SEL_DSCP };
	u64 dscp, prio = 0;
	bool add;
	int err;

	if (argc < 3 || argc > 4)
		return ctl_fail(c, -EINVAL, "usage: app add <dscp> <prio> | app del <dscp> [prio]");
	if (!strcmp(argv[1], "add"))
		add = true;
	else if (!strcmp(argv[1], "del"))
		add = false;
	else
		return ctl_fail(c, -EINVAL, "app: expected add or del");
	if (add && argc != 4)
		return ctl_fail(c, -EINVAL, "usage: app add <dscp> <prio>");
	err = parse_range(c, argv[2], SIMNIC_NUM_DSCP - 1, &dscp);
	if (!err && argc == 4)
		err = parse_range(c, argv[3], SIMNIC_NUM_PRIO - 1, &prio);
	if (err || !c->apply)
		return err;

	app.protocol = dscp;
	app.priority = argc == 4 ? prio : c->port->dscp2prio[dscp];
	err = add ? simnic_dcb_setapp(c->port->netdev, &app) :
		    simnic_dcb_delapp(c->port->netdev, &app);
	if (err)
		return ctl_fail(c, err, "app %s %llu failed (%d)", argv[1], dscp, err);
	return 0;
}

/* ecn <np|rp> <prio|all> <0|1> */
static int cmd_ecn(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	int role, prio = -1, err = 0;
	bool on;
	u8 mask;

	if (argc != 4)
		return ctl_fail(c, -EINVAL, "usage: ecn <np|rp> <prio|all> <0|1>");
	if (!strcmp(argv[1], "np"))
		role = SIMNIC_ECN_NP;
	else if (!strcmp(argv[1], "rp"))
		role = SIMNIC_ECN_RP;
	else
		return ctl_fail(c, -EINVAL, "ecn: role must be np or rp");
	if (strcmp(argv[2], "all"))
		err = parse_prio(c, argv[2], &prio);
	err = err ?: parse_bool(c, argv[3], &on);
	if (err || !c->apply)
		return err;
	mask = prio < 0 ? 0xff : BIT(prio);
	spin_lock_bh(&port->lock);
	if (on)
		port->ecn_en[role] |= mask;
	else
		port->ecn_en[role] &= ~mask;
	spin_unlock_bh(&port->lock);
	return 0;
}

static int cmd_buffer(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	struct dcbnl_buffer b;
	u64 v[8];
	int i, err;

	if (argc != 10 || (strcmp(argv[1], "prio2buffer") && strcmp(argv[1], "size")))
		return ctl_fail(c, -EINVAL,
				"usage: buffer prio2buffer <8 values> | buffer size <8 values>");
	for (i = 0; i < 8; i++) {
		err = parse_range(c, argv[i + 2],
				  argv[1][0] == 'p' ? 7 : U32_MAX, &v[i]);
		if (err)
			return err;
	}
	if (!c->apply)
		return 0;
	err = simnic_dcbnl_ops.dcbnl_getbuffer(port->netdev, &b);
	if (err)
		return ctl_fail(c, err, "buffers not supported (cap_buffer=0)");
	for (i = 0; i < 8; i++) {
		if (argv[1][0] == 'p')
			b.prio2buffer[i] = v[i];
		else
			b.buffer_size[i] = v[i];
	}
	err = simnic_dcbnl_ops.dcbnl_setbuffer(port->netdev, &b);
	if (err)
		return ctl_fail(c, err, "buffer sizes exceed total_size %u",
				port->total_size);
	return 0;
}

/*
 * module temp <milli-degC> | module vcc <uV> |
 * module rx_power|tx_power|bias <lane 1..N|all> <uW|uA>
 */
static int cmd_module(struct ctl_ctx *c, int argc, char **argv)
{
	static const char *const names[] = { "temp", "vcc", "rx_power",
					     "tx_power", "bias" };
	static const s64 max[] = { 127996, 6553500, 6553, 6553, 131070 };
	int field, lane = -1;
	s64 v;
	u64 l;

	if (argc < 3)
		return ctl_fail(c, -EINVAL,
				"usage: module temp|vcc <value> | module rx_power|tx_power|bias <lane|all> <value>");
	for (field = 0; field < ARRAY_SIZE(names); field++)
		if (!strcmp(argv[1], names[field]))
			break;
	if (field == ARRAY_SIZE(names))
		return ctl_fail(c, -EINVAL, "module: unknown field '%s'", argv[1]);
	if (argc != (field >= SIMNIC_MOD_RX_POWER ? 4 : 3))
		return ctl_fail(c, -EINVAL, "module %s: wrong number of arguments", argv[1]);
	if (field >= SIMNIC_MOD_RX_POWER && strcmp(argv[2], "all")) {
		if (parse_range(c, argv[2], 8, &l))
			return -EINVAL;
		if (l == 0)
			return ctl_fail(c, -EINVAL, "module: lanes are numbered from 1");
		lane = l - 1;
	}
	if (kstrtos64(argv[argc - 1], 0, &v))
		return ctl_fail(c, -EINVAL, "bad number '%s'", argv[argc - 1]);
	if (v > max[field] || v < (field == SIMNIC_MOD_TEMP ? -128000 : 0))
		return ctl_fail(c, -EINVAL, "module %s: %lld out of range", argv[1], v);
	if (!c->apply)
		return 0;
	if (simnic_module_set(c->port, field, lane, v))
		return ctl_fail(c, -EINVAL, "module: this module has no lane %d", lane + 1);
	return 0;
}

/* fw_latency stats|qos <us>|default: the sleep of each firmware read (fw.c) */
static int cmd_fw_latency(struct ctl_ctx *c, int argc, char **argv)
{
	enum simnic_fw_kind kind;
	u64 us = 0;
	int err;

	if (argc != 3)
		return ctl_fail(c, -EINVAL,
				"usage: fw_latency stats|qos <us>|default");
	if (!strcmp(argv[1], "stats"))
		kind = SIMNIC_FW_STATS;
	else if (!strcmp(argv[1], "qos"))
		kind = SIMNIC_FW_QOS;
	else
		return ctl_fail(c, -EINVAL,
				"fw_latency: '%s' is not stats or qos", argv[1]);
	if (strcmp(argv[2], "default")) {
		err = parse_range(c, argv[2], 10000000, &us);
		if (err)
			return err;
	}
	if (c->apply)
		simnic_fw_latency_set(c->port, kind,
				      strcmp(argv[2], "default") ? (int)us : -1);
	return 0;
}

/*
 * rx_frame <hex>...: the arguments, concatenated, are one received Ethernet
 * frame without FCS (dst, src, ethertype, payload), ETH_ZLEN up to the MTU
 * plus header and one VLAN tag; rx.c delivers it.  Writes are at most
 * CTL_MAX_WRITE bytes, so about 2000 bytes of frame fit.
 */
static int cmd_rx_frame(struct ctl_ctx *c, int argc, char **argv)
{
	unsigned int max = READ_ONCE(c->port->netdev->mtu) + VLAN_ETH_HLEN;
	size_t digits = 0, len = 0;
	const char *p;
	int i, v, hi = -1, err = 0;
	u8 *frame;

	if (argc < 2)
		return ctl_fail(c, -EINVAL, "usage: rx_frame <hex bytes>...");
	for (i = 1; i < argc; i++)
		digits += strlen(argv[i]);
	if (digits & 1)
		return ctl_fail(c, -EINVAL,
				"rx_frame: odd number of hex digits (%zu)", digits);
	if (digits / 2 < ETH_ZLEN || digits / 2 > max)
		return ctl_fail(c, -EINVAL,
				"rx_frame: %zu bytes, a frame has %d..%u (ETH_ZLEN..MTU+%d)",
				digits / 2, ETH_ZLEN, max, VLAN_ETH_HLEN);
	frame = kmalloc(digits / 2, GFP_KERNEL);
	if (!frame)
		return -ENOMEM;
	for (i = 1; i < argc && !err; i++) {
		for (p = argv[i]; *p && !err; p++) {
			v = hex_to_bin(*p);
			if (v < 0) {
				err = ctl_fail(c, -EINVAL,
					       "rx_frame: '%c' is not a hex digit", *p);
			} else if (hi < 0) {
				hi = v;
			} else {
				frame[len++] = hi << 4 | v;
				hi = -1;
			}
		}
	}
	if (!err && c->apply) {
		err = simnic_rx_frame(c->port, frame, len);
		if (err == -ENETDOWN)
			ctl_fail(c, 0, "rx_frame: port has no link, frame lost");
	}
	kfree(frame);
	return err;
}

/*
 * Link health (link.c): "fec off|none|baser|rs|llrs" sets the active FEC
 * mode.  The counters behind it take set/add/rate like any other.
 */
static int cmd_fec(struct ctl_ctx *c, int argc, char **argv)
{
	u32 fec;

	if (argc != 2 || simnic_fec_parse(argv[1], &fec))
		return ctl_fail(c, -EINVAL, "usage: fec off|none|baser|rs|llrs");
	if (c->apply)
		WRITE_ONCE(c->port->fec_active, fec);
	return 0;
}

static int ctl_cmd(struct ctl_ctx *c, int argc, char **argv)
{
	struct simnic_port *port = c->port;
	const char *cmd = argv[0];
	u64 v;
	bool b, b2;
	int err;

	if (!strcmp(cmd, "set") || !strcmp(cmd, "add") || !strcmp(cmd, "rate"))
		return cmd_counter(c, argc, argv);
	if (!strcmp(cmd, "traffic"))
		return cmd_traffic(c, argc, argv);
	if (!strcmp(cmd, "storm"))
		return cmd_storm(c, argc, argv);
	if (!strcmp(cmd, "ets"))
		return cmd_ets(c, argc, argv);
	if (!strcmp(cmd, "app"))
		return cmd_app(c, argc, argv);
	if (!strcmp(cmd, "ecn"))
		return cmd_ecn(c, argc, argv);
	if (!strcmp(cmd, "buffer"))
		return cmd_buffer(c, argc, argv);
	if (!strcmp(cmd, "module"))
		return cmd_module(c, argc, argv);
	if (!strcmp(cmd, "fec"))
		return cmd_fec(c, argc, argv);

	if (!strcmp(cmd, "carrier")) {
		if (argc != 2)
			return ctl_fail(c, -EINVAL, "usage: carrier on|off");
		err = parse_bool(c, argv[1], &b);
		if (!err && c->apply)
			simnic_set_cable(port, b);
		return err;
	}
	if (!strcmp(cmd, "pfc")) {
		if (argc != 2)
			return ctl_fail(c, -EINVAL, "usage: pfc <mask>");
		err = parse_range(c, argv[1], 0xff, &v);
		if (!err && c->apply)
			simnic_dcb_set_pfc_en(port, v, false);
		return err;
	}
	if (!strcmp(cmd, "pause")) {
		if (argc != 3)
			return ctl_fail(c, -EINVAL, "usage: pause <rx 0|1> <tx 0|1>");
		err = parse_bool(c, argv[1], &b) ?: parse_bool(c, argv[2], &b2);
		if (err || !c->apply)
			return err;
		if ((b || b2) && port->pfc_en)
			return ctl_fail(c, -EINVAL, "link pause needs pfc_en 0");
		port->rx_pause = b;
		port->tx_pause = b2;
		return 0;
	}
	if (!strcmp(cmd, "dcbx")) {
		if (argc != 2 || (strcmp(argv[1], "host") && strcmp(argv[1], "fw")))
			return ctl_fail(c, -EINVAL, "usage: dcbx host|fw");
		if (!c->apply)
			return 0;
		port->dcbx_host = argv[1][0] == 'h';
		if (port->dcbx_host)
			port->dcbx_cap |= DCB_CAP_DCBX_HOST;
		else
			port->dcbx_cap &= ~DCB_CAP_DCBX_HOST;
		return 0;
	}
	if (!strcmp(cmd, "maxrate")) {
		u64 tc;
		u16 val;
		u8 unit;

		if (argc != 3)
			return ctl_fail(c, -EINVAL, "usage: maxrate <tc> <kbit/s>");
		err = parse_range(c, argv[1], SIMNIC_NUM_TC - 1, &tc) ?:
		      parse_u64(c, argv[2], &v);
		if (err)
			return err;
		if (simnic_dcb_setmaxrate_one(port, tc, v, &val, &unit))
			return ctl_fail(c, -EINVAL, "maxrate %llu exceeds 255 Gbit/s", v);
		if (c->apply) {
			port->maxrate_val[tc] = val;
			port->maxrate_unit[tc] = unit;
		}
		return 0;
	}
	if (!strcmp(cmd, "fw_latency"))
		return cmd_fw_latency(c, argc, argv);
	if (!strcmp(cmd, "rx_frame"))
		return cmd_rx_frame(c, argc, argv);
	if (!strcmp(cmd, "fw_lldp")) {
		if (argc != 2)
			return ctl_fail(c, -EINVAL, "usage: fw_lldp on|off");
		err = parse_bool(c, argv[1], &b);
		if (!err && c->apply)
			WRITE_ONCE(port->fw_lldp, b);
		return err;
	}
	if (!strcmp(cmd, "cable_len")) {
		if (argc != 2)
			return ctl_fail(c, -EINVAL, "usage: cable_len <meters>");
		err = parse_range(c, argv[1], U16_MAX, &v);
		if (!err && c->apply)
			port->cable_len = v;
		return err;
	}
	if (!strcmp(cmd, "notify")) {
		if (argc != 1)
			return ctl_fail(c, -EINVAL, "usage: notify");
		if (c->apply)
			dcbnl_ieee_notify(port->netdev, RTM_GETDCB,
					  DCB_CMD_IEEE_GET, 0, 0);
		return 0;
	}
	if (!strcmp(cmd, "reset")) {
		if (argc != 1)
			return ctl_fail(c, -EINVAL, "usage: reset");
		if (c->apply) {
			u64 now;
			int i;

			spin_lock_bh(&port->lock);
			now = simnic_now();
			simnic_storm_stop_all(port, now);
			for (i = 0; i < C_NUM; i++) {
				port->ctr[i].base = 0;
				port->ctr[i].rate = 0;
				port->ctr[i].t_ref = now;
			}
			spin_unlock_bh(&port->lock);
			memset(port->pfc_cache_req, 0, sizeof(port->pfc_cache_req));
			memset(port->pfc_cache_ind, 0, sizeof(port->pfc_cache_ind));
			simnic_rx_reset(port);
		}
		return 0;
	}
	/* pcie_link, aer (pci.c); gid_refuse (rdma.c) */
	err = simnic_pci_ctl(port->index, argc, argv, c->apply, c->err,
			     sizeof(port->ctl_err));
	if (err == -ENOENT)
		err = simnic_rdma_ctl(port->index, argc, argv, c->apply, c->err,
				      sizeof(port->ctl_err));
	if (err != -ENOENT)
		return err;
	return ctl_fail(c, -EINVAL, "unknown command '%s'", cmd);
}

/* Run every statement of buf; buf is modified. */
static int ctl_run(struct ctl_ctx *c, char *buf)
{
	char *stmt, *argv[CTL_MAX_ARGS + 1];
	int argc, err;

	while ((stmt = strsep(&buf, "\n;")) != NULL) {
		char *hash = strchr(stmt, '#'), *tok;

		if (hash)
			*hash = '\0';
		argc = 0;
		while ((tok = strsep(&stmt, " \t\r")) != NULL) {
			if (!*tok)
				continue;
			if (argc == CTL_MAX_ARGS)
				return ctl_fail(c, -EINVAL, "too many arguments");
			argv[argc++] = tok;
		}
		if (!argc)
			continue;
		argv[argc] = NULL;
		err = ctl_cmd(c, argc, argv);
		if (err)
			return err;
	}
	return 0;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct simnic_port *port = m->private;
	struct ctl_ctx c = { .port = port };
	char *buf, *copy;
	char err_msg[sizeof(port->ctl_err)] = "";
	size_t i;
	int err;

	if (count > CTL_MAX_WRITE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	for (i = 0; i < count; i++) {
		if (!isprint(buf[i]) && !isspace(buf[i])) {
			kfree(buf);
			return -EINVAL;
		}
	}
	copy = kstrdup(buf, GFP_KERNEL);
	if (!copy) {
		kfree(buf);
		return -ENOMEM;
	}

	c.err = err_msg;
	err = ctl_run(&c, copy); /* validation pass */
	if (!err) {
		c.apply = true;
		rtnl_lock();
		err = ctl_run(&c, buf);
		rtnl_unlock();
	}
	kfree(copy);
	kfree(buf);

	rtnl_lock();
	strscpy(port->ctl_err, err ? err_msg : "", sizeof(port->ctl_err));
	rtnl_unlock();
	return err ?: count;
}

static int ctl_show(struct seq_file *m, void *v)
{
	struct simnic_port *port = m->private;
	char ibname[64];
	u64 now;
	int i, d, p;

	simnic_rdma_port_name(port, ibname, sizeof(ibname));
	rtnl_lock();
	seq_printf(m, "# simnic port %d netdev %s rdma %s\n", port->index,
		   port->netdev->name, ibname);
	seq_printf(m,
		   "# state running=%d cable=%d carrier=%d pfc_en=0x%02x pause_rx=%d pause_tx=%d trust=%s dscp_apps=%u dcbx=%s dcbx_cap=0x%02x cable_len=%u stall_ms=%u/%u ecn_np=0x%02x ecn_rp=0x%02x\n",
		   port->running, port->cable, netif_carrier_ok(port->netdev),
		   port->pfc_en, port->rx_pause, port->tx_pause,
		   port->trust_dscp ? "dscp" : "pcp", port->dscp_app_cnt,
		   port->dcbx_host ? "host" : "fw", port->dcbx_cap,
		   port->cable_len, port->stall_critical_ms,
		   port->stall_minor_ms, port->ecn_en[SIMNIC_ECN_NP],
		   port->ecn_en[SIMNIC_ECN_RP]);
	seq_printf(m, "# fw_latency stats_us=%u qos_us=%u\n",
		   simnic_fw_latency(port, SIMNIC_FW_STATS),
		   simnic_fw_latency(port, SIMNIC_FW_QOS));
	seq_printf(m, "# fw_sleep count=%lld error_ns=%lld\n",
		   (long long)atomic64_read(&port->fw_sleeps),
		   (long long)atomic64_read(&port->fw_sleep_error_ns));
	seq_printf(m, "# fw_model calls=%lld model_ns=%lld\n",
		   (long long)atomic64_read(&port->fw_calls),
		   (long long)atomic64_read(&port->fw_model_ns));
	seq_printf(m, "# frames fw_lldp=%s rx_frames=%lld fw_lldp_rx=%lld fw_lldp_tx=%lld\n",
		   READ_ONCE(port->fw_lldp) ? "on" : "off",
		   (long long)atomic64_read(&port->rx_frames),
		   (long long)atomic64_read(&port->fw_lldp_rx),
		   (long long)atomic64_read(&port->fw_lldp_tx));
	seq_printf(m, "# link fec=%s rx_bits_phy=%d\n",
		   simnic_fec_name(READ_ONCE(port->fec_active)),
		   READ_ONCE(simnic_rx_bits_phy));
	if (port->ctl_err[0])
		seq_printf(m, "# last_error %s\n", port->ctl_err);
	rtnl_unlock();

	spin_lock_bh(&port->lock);
	now = simnic_now();
	for (d = 0; d < 2; d++) {
		for (p = 0; p < SIMNIC_NUM_PRIO; p++) {
			struct simnic_storm *s = &port->storm[d][p];

			if (!s->active)
				continue;
			seq_printf(m,
				   "# storm prio=%d dir=%s age_ms=%llu pause_rate=%llu phase=%s\n",
				   p, d == SIMNIC_RX ? "rx" : "tx",
				   div_u64(now - s->t0, NSEC_PER_MSEC),
				   s->pause_rate,
				   now >= s->t_crit ? "prevented" :
				   now >= s->t_minor ? "warning" : "pausing");
		}
	}
	for (i = 0; i < C_NUM; i++)
		seq_printf(m, "%s %llu %llu\n", simnic_ctr_names[i],
			   simnic_ctr_report(port, i, now),
			   simnic_ctr_eff_rate(port, i, now));
	spin_unlock_bh(&port->lock);
	return 0;
}

static int ctl_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, ctl_show, inode->i_private, 16384);
}

/*
 * No .owner: an open ctl file must not pin the module, so rmmod works while
 * a reader holds it open.  debugfs then refuses every call into this module
 * (-EIO) once the file is removed; only ->release may still run, and it is
 * single_release() from the core.  The fops themselves are allocated and
 * deliberately left behind at unload, because the release of a file that is
 * still open reads them after this module is gone.
 */
static const struct file_operations ctl_fops_template = {
	.open = ctl_open,
	.read = seq_read,
	.write = ctl_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static const struct file_operations *ctl_fops;

static int events_open(struct inode *inode, struct file *file)
{
	return single_open(file, simnic_mon_show, inode->i_private);
}

static const struct file_operations events_fops_template = {
	.open = events_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static const struct file_operations *events_fops;

int simnic_ctl_port_add(struct simnic_port *port)
{
	port->dbg_dir = debugfs_create_dir(port->name, simnic_dbg_root);
	debugfs_create_file("ctl", 0600, port->dbg_dir, port, ctl_fops);
	debugfs_create_file("dcb_events", 0400, port->dbg_dir, port,
			    events_fops);
	return 0;
}

/* Keeps /sys/kernel/debug/simnic/<ifname> named after the netdev (RTNL held). */
void simnic_ctl_port_rename(struct simnic_port *port)
{
	struct dentry *d;

	if (!port->dbg_dir || !simnic_dbg_root)
		return;
	d = debugfs_rename(simnic_dbg_root, port->dbg_dir, simnic_dbg_root,
			   port->netdev->name);
	if (!IS_ERR(d))
		strscpy(port->name, port->netdev->name, IFNAMSIZ);
}

void simnic_ctl_port_remove(struct simnic_port *port)
{
	debugfs_remove_recursive(port->dbg_dir);
	port->dbg_dir = NULL;
}

int simnic_ctl_init(void)
{
	int i;

	ctl_fops = kmemdup(&ctl_fops_template, sizeof(ctl_fops_template),
			   GFP_KERNEL);
	events_fops = kmemdup(&events_fops_template,
			      sizeof(events_fops_template), GFP_KERNEL);
	if (!ctl_fops || !events_fops) {
		kfree(ctl_fops);
		kfree(events_fops);
		ctl_fops = events_fops = NULL;
		return -ENOMEM;
	}
	simnic_dbg_root = debugfs_create_dir("simnic", NULL);

	for (i = 0; i < simnic_num_ports; i++)
		simnic_ctl_port_add(simnic_ports[i]);
	return 0;
}

/* debugfs_remove waits for readers/writers inside the fops to leave. */
void simnic_ctl_exit(void)
{
	debugfs_remove_recursive(simnic_dbg_root);
	simnic_dbg_root = NULL;
}
