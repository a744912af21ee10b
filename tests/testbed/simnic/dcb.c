// SPDX-License-Identifier: GPL-2.0
/*
 * dcbnl_rtnl_ops with the semantics of mlx5's en_dcbnl.c: the port state
 * below plays the firmware registers (QTCT/QETCR, PFCC, PPTB/PBMC, QPTS/QPDPM)
 * and the functions reproduce what the mlx5e driver derives from them.
 * All ops run under RTNL (dcbnl core, ethtool, and the control file).
 */
#include <linux/rtnetlink.h>

#include "simnic.h"

#define SIMNIC_MAX_BW_ALLOC 100
#define SIMNIC_VENDOR_TC_GROUP 7
#define SIMNIC_LOWEST_PRIO_GROUP 0
#define SIMNIC_BUFFER_CELL 128

/* QETCR max_bw_units */
enum { SIMNIC_100_MBPS_UNIT = 3, SIMNIC_GBPS_UNIT = 4, SIMNIC_BW_NO_LIMIT = 7 };
#define SIMNIC_100MB_TO_KB 100000ULL
#define SIMNIC_1GB_TO_KB 1000000ULL
#define SIMNIC_MAXRATE_TYPE_MAX 255ULL /* no qetcr_qshr_max_bw_val_msb */

/* mlx5e CEE return codes */
enum { SIMNIC_DCB_CHG_RESET, SIMNIC_DCB_NO_CHG };

static struct simnic_port *to_port(struct net_device *dev)
{
	return netdev_priv(dev);
}

/* ---- ETS ---- */

/* mlx5e_build_tc_group() */
static void build_tc_group(const struct ieee_ets *ets, u8 *tc_group)
{
	bool any_ets = false, ets_zero_bw = false;
	int strict_group, i;

	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_ETS) {
			any_ets = true;
			if (!ets->tc_tx_bw[i])
				ets_zero_bw = true;
		}
	}
	strict_group = SIMNIC_LOWEST_PRIO_GROUP;
	if (any_ets)
		strict_group++;
	if (ets_zero_bw)
		strict_group++;

	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_VENDOR:
			tc_group[i] = SIMNIC_VENDOR_TC_GROUP;
			break;
		case IEEE_8021QAZ_TSA_STRICT:
			tc_group[i] = strict_group++;
			break;
		case IEEE_8021QAZ_TSA_ETS:
			tc_group[i] = SIMNIC_LOWEST_PRIO_GROUP;
			if (ets->tc_tx_bw[i] && ets_zero_bw)
				tc_group[i] = SIMNIC_LOWEST_PRIO_GROUP + 1;
			break;
		}
	}
}

/* mlx5e_build_tc_tx_bw() */
static void build_tc_tx_bw(const struct ieee_ets *ets, u8 *tc_tx_bw)
{
	int zero_bw_share = 0, last_zero = -1, num_zero = 0, i;

	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_ETS && !ets->tc_tx_bw[i]) {
			num_zero++;
			last_zero = i;
		}
	}
	if (num_zero)
		zero_bw_share = SIMNIC_MAX_BW_ALLOC / num_zero;

	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_VENDOR:
		case IEEE_8021QAZ_TSA_STRICT:
			tc_tx_bw[i] = SIMNIC_MAX_BW_ALLOC;
			break;
		case IEEE_8021QAZ_TSA_ETS:
			tc_tx_bw[i] = ets->tc_tx_bw[i] ?: zero_bw_share;
			break;
		}
	}
	if (last_zero != -1)
		tc_tx_bw[last_zero] += SIMNIC_MAX_BW_ALLOC % num_zero;
}

/* mlx5e_dcbnl_ieee_setets_core(): program QTCT and QETCR. */
void simnic_dcb_apply_ets(struct simnic_port *port, const struct ieee_ets *ets)
{
	build_tc_group(ets, port->tc_group);
	build_tc_tx_bw(ets, port->tc_bw);
	memcpy(port->prio_tc, ets->prio_tc, sizeof(port->prio_tc));
	memcpy(port->tc_tsa, ets->tc_tsa, sizeof(port->tc_tsa));
}

static int validate_ets(const struct ieee_ets *ets, bool zero_sum_allowed)
{
	bool have_ets = false;
	int bw_sum = 0, i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		if (ets->prio_tc[i] >= SIMNIC_NUM_PRIO)
			return -EINVAL;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		/*
		 * mlx5 leaves the TC group of any other TSA (CBS, ...)
		 * unprogrammed; simnic rejects it instead of inventing
		 * firmware behaviour.
		 */
		if (ets->tc_tsa[i] != IEEE_8021QAZ_TSA_STRICT &&
		    ets->tc_tsa[i] != IEEE_8021QAZ_TSA_ETS &&
		    ets->tc_tsa[i] != IEEE_8021QAZ_TSA_VENDOR)
			return -EINVAL;
		if (ets->tc_tsa[i] == IEEE_8021QAZ_TSA_ETS) {
			have_ets = true;
			bw_sum += ets->tc_tx_bw[i];
		}
	}
	if (have_ets && bw_sum != 100 && !(zero_sum_allowed && !bw_sum))
		return -EINVAL;
	return 0;
}

int simnic_dcb_validate_ets(const struct ieee_ets *ets)
{
	return validate_ets(ets, false);
}

/* mlx5e_dcbnl_ieee_getets(): derive TSA and bandwidth from the groups. */
void simnic_dcb_getets(struct simnic_port *port, struct ieee_ets *ets)
{
	bool zero_bw_ets_tc = false, group6 = false;
	int i;

	memset(ets, 0, sizeof(*ets));
	memcpy(ets->prio_tc, port->prio_tc, sizeof(ets->prio_tc));
	ets->ets_cap = SIMNIC_NUM_TC;
	for (i = 0; i < ets->ets_cap; i++) {
		ets->tc_tx_bw[i] = port->tc_bw[i];
		if (ets->tc_tx_bw[i] < SIMNIC_MAX_BW_ALLOC &&
		    port->tc_group[i] == SIMNIC_LOWEST_PRIO_GROUP + 1)
			zero_bw_ets_tc = true;
		if (port->tc_group[i] == SIMNIC_VENDOR_TC_GROUP - 1)
			group6 = true;
	}
	if (zero_bw_ets_tc)
		for (i = 0; i < ets->ets_cap; i++)
			if (port->tc_group[i] == SIMNIC_LOWEST_PRIO_GROUP)
				ets->tc_tx_bw[i] = 0;
	for (i = 0; i < ets->ets_cap; i++) {
		if (ets->tc_tx_bw[i] < SIMNIC_MAX_BW_ALLOC)
			port->tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
		else if (port->tc_group[i] == SIMNIC_VENDOR_TC_GROUP && !group6)
			port->tc_tsa[i] = IEEE_8021QAZ_TSA_VENDOR;
	}
	memcpy(ets->tc_tsa, port->tc_tsa, sizeof(ets->tc_tsa));
}

static int simnic_ieee_getets(struct net_device *dev, struct ieee_ets *ets)
{
	simnic_fw_delay(to_port(dev), SIMNIC_FW_QOS); /* QTCT/QETCR */
	simnic_dcb_getets(to_port(dev), ets);
	return 0;
}

static int simnic_ieee_setets(struct net_device *dev, struct ieee_ets *ets)
{
	int err = simnic_write_latency(false);

	if (err)
		return err;
	err = validate_ets(ets, false);
	if (err)
		return err;
	simnic_dcb_apply_ets(to_port(dev), ets);
	return 0;
}

/* ---- PFC ---- */

int simnic_dcb_set_pfc_en(struct simnic_port *port, u8 pfc_en, bool toggle)
{
	if (pfc_en == port->pfc_en)
		return 0;
	port->pfc_en = pfc_en;
	/* 802.1Qbb: PFC and link-level PAUSE are mutually exclusive */
	if (pfc_en) {
		port->rx_pause = false;
		port->tx_pause = false;
	}
	if (toggle)
		simnic_toggle_link(port);
	return 0;
}

static int simnic_ieee_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct simnic_port *port = to_port(dev);
	u64 now;
	int i;

	simnic_fw_delay(port, SIMNIC_FW_QOS); /* PFCC, PPCNT */
	now = simnic_now();
	memset(pfc, 0, sizeof(*pfc));
	pfc->pfc_cap = SIMNIC_NUM_TC;
	if (simnic_pfc_stats_cache) {
		/* mlx5 reads the pport cache refreshed only by ethtool -S */
		memcpy(pfc->requests, port->pfc_cache_req, sizeof(pfc->requests));
		memcpy(pfc->indications, port->pfc_cache_ind,
		       sizeof(pfc->indications));
	} else {
		spin_lock_bh(&port->lock);
		for (i = 0; i < SIMNIC_NUM_PRIO; i++) {
			pfc->requests[i] =
				simnic_ctr_value(port, C_PRIO(i, SP_TX_PAUSE), now);
			pfc->indications[i] =
				simnic_ctr_value(port, C_PRIO(i, SP_RX_PAUSE), now);
		}
		spin_unlock_bh(&port->lock);
	}
	if (simnic_cap_buffer)
		pfc->delay = port->cable_len;
	pfc->pfc_en = port->pfc_en;
	return 0;
}

static int simnic_ieee_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct simnic_port *port = to_port(dev);
	int err = simnic_write_latency(false);

	if (err)
		return err;
	simnic_dcb_set_pfc_en(port, pfc->pfc_en, true);
	if (pfc->delay != port->cable_len)
		port->cable_len = pfc->delay;
	return 0;
}

/* ---- maxrate ---- */

u64 simnic_dcb_maxrate_kbps(struct simnic_port *port, int tc)
{
	switch (port->maxrate_unit[tc]) {
	case SIMNIC_100_MBPS_UNIT:
		return port->maxrate_val[tc] * SIMNIC_100MB_TO_KB;
	case SIMNIC_GBPS_UNIT:
		return port->maxrate_val[tc] * SIMNIC_1GB_TO_KB;
	}
	return 0;
}

/* The QETCR encoding mlx5e_dcbnl_ieee_setmaxrate() picks for a rate. */
int simnic_dcb_setmaxrate_one(struct simnic_port *port, int tc, u64 rate,
			      u16 *val, u8 *unit)
{
	if (!rate) {
		*val = 0;
		*unit = SIMNIC_BW_NO_LIMIT;
	} else if (rate <= SIMNIC_MAXRATE_TYPE_MAX * SIMNIC_100MB_TO_KB) {
		*val = div_u64(rate, SIMNIC_100MB_TO_KB) ?: 1;
		*unit = SIMNIC_100_MBPS_UNIT;
	} else if (rate <= SIMNIC_MAXRATE_TYPE_MAX * SIMNIC_1GB_TO_KB) {
		*val = div_u64(rate, SIMNIC_1GB_TO_KB);
		*unit = SIMNIC_GBPS_UNIT;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int simnic_ieee_getmaxrate(struct net_device *dev,
				  struct ieee_maxrate *maxrate)
{
	struct simnic_port *port = to_port(dev);
	int i;

	simnic_fw_delay(port, SIMNIC_FW_QOS); /* QETCR */
	memset(maxrate, 0, sizeof(*maxrate));
	for (i = 0; i < SIMNIC_NUM_TC; i++)
		maxrate->tc_maxrate[i] = simnic_dcb_maxrate_kbps(port, i);
	return 0;
}

static int simnic_ieee_setmaxrate(struct net_device *dev,
				  struct ieee_maxrate *maxrate)
{
	struct simnic_port *port = to_port(dev);
	u16 val[SIMNIC_NUM_TC];
	u8 unit[SIMNIC_NUM_TC];
	int i, err;

	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		err = simnic_dcb_setmaxrate_one(port, i, maxrate->tc_maxrate[i],
						&val[i], &unit[i]);
		if (err)
			return err;
	}
	memcpy(port->maxrate_val, val, sizeof(val));
	memcpy(port->maxrate_unit, unit, sizeof(unit));
	return 0;
}

/* ---- DSCP APP entries (trust state) ---- */

int simnic_dcb_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct simnic_port *port = to_port(dev);
	struct dcb_app old;
	bool is_new;
	int err;

	if (!simnic_cap_dscp)
		return -EOPNOTSUPP;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP ||
	    app->protocol >= SIMNIC_NUM_DSCP)
		return -EINVAL;
	/* the QPDPM register holds a 3-bit priority */
	if (app->priority >= SIMNIC_NUM_PRIO)
		return -EINVAL;

	old.selector = IEEE_8021QAZ_APP_SEL_DSCP;
	old.protocol = app->protocol;
	old.priority = port->dscp2prio[app->protocol];

	if (!port->dscp_app_cnt)
		port->trust_dscp = true;
	port->dscp2prio[app->protocol] = app->priority;

	/* replace: drop the previous mapping of this DSCP first */
	is_new = dcb_ieee_delapp(dev, &old) != 0;
	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	if (is_new)
		port->dscp_app_cnt++;
	return 0;
}

int simnic_dcb_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct simnic_port *port = to_port(dev);
	int err;

	if (!simnic_cap_dscp)
		return -EOPNOTSUPP;
	if (app->selector != IEEE_8021QAZ_APP_SEL_DSCP ||
	    app->protocol >= SIMNIC_NUM_DSCP)
		return -EINVAL;
	if (!port->dscp_app_cnt)
		return -ENOENT;
	if (app->priority != port->dscp2prio[app->protocol])
		return -ENOENT;

	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	/* mlx5 resets the mapping to priority 0, not to the default */
	port->dscp2prio[app->protocol] = 0;
	if (!--port->dscp_app_cnt)
		port->trust_dscp = false;
	return 0;
}

/* ---- DCBX ---- */

static u8 simnic_getdcbx(struct net_device *dev)
{
	return to_port(dev)->dcbx_cap;
}

static u8 simnic_setdcbx(struct net_device *dev, u8 mode)
{
	struct simnic_port *port = to_port(dev);

	if (mode & DCB_CAP_DCBX_LLD_MANAGED)
		return 1;
	if (!mode) {
		/* firmware (AUTO) controlled */
		port->dcbx_host = false;
		port->dcbx_cap &= ~DCB_CAP_DCBX_HOST;
		return 0;
	}
	if (!(mode & DCB_CAP_DCBX_HOST))
		return 1;
	port->dcbx_host = true;
	port->dcbx_cap = mode;
	return 0;
}

/* ---- buffers ---- */

static int simnic_getbuffer(struct net_device *dev, struct dcbnl_buffer *buf)
{
	struct simnic_port *port = to_port(dev);

	if (!simnic_cap_buffer)
		return -EOPNOTSUPP;
	simnic_fw_delay(port, SIMNIC_FW_QOS); /* PPTB, PBMC */
	memcpy(buf->prio2buffer, port->prio2buffer, sizeof(buf->prio2buffer));
	memcpy(buf->buffer_size, port->buffer_size, sizeof(buf->buffer_size));
	buf->total_size = port->total_size;
	return 0;
}

static int simnic_setbuffer(struct net_device *dev, struct dcbnl_buffer *buf)
{
	struct simnic_port *port = to_port(dev);
	u32 size[SIMNIC_NUM_BUFFERS];
	u64 total = 0;
	int i;

	if (simnic_write_latency(false))
		return -EINTR;

	if (!simnic_cap_buffer)
		return -EOPNOTSUPP;
	for (i = 0; i < SIMNIC_NUM_PRIO; i++)
		if (buf->prio2buffer[i] >= SIMNIC_NUM_BUFFERS)
			return -EINVAL;
	for (i = 0; i < SIMNIC_NUM_BUFFERS; i++) {
		/* PBMC holds sizes in cells */
		size[i] = buf->buffer_size[i] & ~(SIMNIC_BUFFER_CELL - 1);
		total += size[i];
	}
	if (total > port->total_size)
		return -EINVAL;
	memcpy(port->prio2buffer, buf->prio2buffer, sizeof(port->prio2buffer));
	memcpy(port->buffer_size, size, sizeof(size));
	return 0;
}

/* ---- CEE (mlx5e keeps a staging copy applied by setall) ---- */

static u8 simnic_cee_getstate(struct net_device *dev)
{
	return 1;
}

static void simnic_cee_getpermhwaddr(struct net_device *dev, u8 *addr)
{
	memset(addr, 0xff, MAX_ADDR_LEN);
	ether_addr_copy(addr, dev->dev_addr);
}

static void simnic_cee_setpgtccfgtx(struct net_device *dev, int prio, u8 type,
				    u8 pgid, u8 bw_pct, u8 up_map)
{
	if (prio < 0 || prio >= SIMNIC_NUM_PRIO || pgid >= SIMNIC_NUM_TC)
		return;
	to_port(dev)->cee.prio_to_pg[prio] = pgid;
}

static void simnic_cee_setpgbwgcfgtx(struct net_device *dev, int pgid, u8 bw)
{
	if (pgid < 0 || pgid >= SIMNIC_NUM_TC)
		return;
	to_port(dev)->cee.pg_bw_pct[pgid] = bw;
}

static void simnic_cee_getpgtccfgtx(struct net_device *dev, int prio, u8 *type,
				    u8 *pgid, u8 *bw_pct, u8 *up_map)
{
	if (prio < 0 || prio >= SIMNIC_NUM_PRIO)
		return;
	*type = 0;
	*bw_pct = 0;
	*up_map = 0;
	*pgid = to_port(dev)->prio_tc[prio];
}

static void simnic_cee_getpgbwgcfgtx(struct net_device *dev, int pgid, u8 *bw)
{
	struct ieee_ets ets;

	if (pgid < 0 || pgid >= SIMNIC_NUM_TC)
		return;
	simnic_dcb_getets(to_port(dev), &ets);
	*bw = ets.tc_tx_bw[pgid];
}

static void simnic_cee_setpfccfg(struct net_device *dev, int prio, u8 setting)
{
	if (prio < 0 || prio >= SIMNIC_NUM_PRIO || setting > 1)
		return;
	to_port(dev)->cee.pfc_setting[prio] = setting;
}

static void simnic_cee_getpfccfg(struct net_device *dev, int prio, u8 *setting)
{
	if (prio < 0 || prio >= SIMNIC_NUM_PRIO || !setting)
		return;
	*setting = (to_port(dev)->pfc_en >> prio) & 1;
}

static u8 simnic_cee_getcap(struct net_device *dev, int capid, u8 *cap)
{
	switch (capid) {
	case DCB_CAP_ATTR_PG:
	case DCB_CAP_ATTR_PFC:
		*cap = true;
		break;
	case DCB_CAP_ATTR_UP2TC:
	case DCB_CAP_ATTR_GSP:
	case DCB_CAP_ATTR_BCN:
		*cap = false;
		break;
	case DCB_CAP_ATTR_PG_TCS:
	case DCB_CAP_ATTR_PFC_TCS:
		*cap = 1 << (SIMNIC_NUM_TC - 1);
		break;
	case DCB_CAP_ATTR_DCBX:
		*cap = to_port(dev)->dcbx_cap | DCB_CAP_DCBX_VER_CEE |
		       DCB_CAP_DCBX_VER_IEEE;
		break;
	default:
		*cap = 0;
		return 1;
	}
	return 0;
}

static int simnic_cee_getnumtcs(struct net_device *dev, int tcs_id, u8 *num)
{
	switch (tcs_id) {
	case DCB_NUMTCS_ATTR_PG:
	case DCB_NUMTCS_ATTR_PFC:
		*num = SIMNIC_NUM_TC;
		return 0;
	}
	return -EINVAL;
}

static u8 simnic_cee_getpfcstate(struct net_device *dev)
{
	return to_port(dev)->pfc_en ? 1 : 0;
}

static void simnic_cee_setpfcstate(struct net_device *dev, u8 state)
{
	if (state > 1)
		return;
	to_port(dev)->cee.pfc_enable = state;
}

static u8 simnic_cee_setall(struct net_device *dev)
{
	struct simnic_port *port = to_port(dev);
	struct simnic_cee *cee = &port->cee;
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	int i;

	memset(&ets, 0, sizeof(ets));
	memset(&pfc, 0, sizeof(pfc));
	ets.ets_cap = IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		ets.tc_tx_bw[i] = cee->pg_bw_pct[i];
		ets.tc_rx_bw[i] = cee->pg_bw_pct[i];
		ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
		ets.prio_tc[i] = cee->prio_to_pg[i];
	}
	if (validate_ets(&ets, true))
		return SIMNIC_DCB_NO_CHG;
	simnic_dcb_apply_ets(port, &ets);

	/* like mlx5e_dcbnl_setall(), delay stays 0 in the PFC it applies */
	pfc.pfc_cap = SIMNIC_NUM_TC;
	if (cee->pfc_enable)
		for (i = 0; i < SIMNIC_NUM_PRIO; i++)
			pfc.pfc_en |= cee->pfc_setting[i] << i;
	simnic_ieee_setpfc(dev, &pfc);
	return SIMNIC_DCB_CHG_RESET;
}

const struct dcbnl_rtnl_ops simnic_dcbnl_ops = {
	.ieee_getets = simnic_ieee_getets,
	.ieee_setets = simnic_ieee_setets,
	.ieee_getmaxrate = simnic_ieee_getmaxrate,
	.ieee_setmaxrate = simnic_ieee_setmaxrate,
	.ieee_getpfc = simnic_ieee_getpfc,
	.ieee_setpfc = simnic_ieee_setpfc,
	.ieee_setapp = simnic_dcb_setapp,
	.ieee_delapp = simnic_dcb_delapp,
	.getdcbx = simnic_getdcbx,
	.setdcbx = simnic_setdcbx,
	.dcbnl_getbuffer = simnic_getbuffer,
	.dcbnl_setbuffer = simnic_setbuffer,

	.setall = simnic_cee_setall,
	.getstate = simnic_cee_getstate,
	.getpermhwaddr = simnic_cee_getpermhwaddr,
	.setpgtccfgtx = simnic_cee_setpgtccfgtx,
	.setpgbwgcfgtx = simnic_cee_setpgbwgcfgtx,
	.getpgtccfgtx = simnic_cee_getpgtccfgtx,
	.getpgbwgcfgtx = simnic_cee_getpgbwgcfgtx,
	.setpfccfg = simnic_cee_setpfccfg,
	.getpfccfg = simnic_cee_getpfccfg,
	.getcap = simnic_cee_getcap,
	.getnumtcs = simnic_cee_getnumtcs,
	.getpfcstate = simnic_cee_getpfcstate,
	.setpfcstate = simnic_cee_setpfcstate,
};

/* mlx5e_ets_init(): all TCs vendor at 100 %, prio0->tc1, prio1->tc0. */
void simnic_dcb_init(struct simnic_port *port)
{
	struct ieee_ets ets;
	int i;

	memset(&ets, 0, sizeof(ets));
	ets.ets_cap = SIMNIC_NUM_TC;
	for (i = 0; i < SIMNIC_NUM_TC; i++) {
		ets.tc_tx_bw[i] = SIMNIC_MAX_BW_ALLOC;
		ets.tc_tsa[i] = IEEE_8021QAZ_TSA_VENDOR;
		ets.prio_tc[i] = i;
	}
	ets.prio_tc[0] = 1;
	ets.prio_tc[1] = 0;
	simnic_dcb_apply_ets(port, &ets);
	for (i = 0; i < SIMNIC_NUM_TC; i++)
		port->maxrate_unit[i] = SIMNIC_BW_NO_LIMIT;
}

/* mlx5e_dcbnl_delete_app(): drop our DSCP entries from the core's list. */
void simnic_dcb_cleanup(struct simnic_port *port)
{
	struct dcb_app app = { .selector = IEEE_8021QAZ_APP_SEL_DSCP };
	int d;

	ASSERT_RTNL();
	if (!port->dscp_app_cnt)
		return;
	for (d = 0; d < SIMNIC_NUM_DSCP; d++) {
		app.protocol = d;
		app.priority = port->dscp2prio[d];
		dcb_ieee_delapp(port->netdev, &app);
	}
	port->dscp_app_cnt = 0;
	port->trust_dscp = false;
}
