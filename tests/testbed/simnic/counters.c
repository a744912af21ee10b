// SPDX-License-Identifier: GPL-2.0
/*
 * Counter engine: every counter is base + rate * (now - t_ref), evaluated on
 * read.  Any change (new rate, storm start/stop, link up/down) first "folds"
 * the counter: base becomes the current value and t_ref becomes now.  A PFC
 * storm changes the effective rate of the counters of its (prio, direction)
 * and, for a TX storm with stall prevention enabled, switches to a second
 * phase at the critical watermark; the value function integrates both phases
 * so no timer is needed.
 */
#include <linux/glob.h>
#include <linux/ktime.h>
#include <linux/math64.h>

#include "simnic.h"

char simnic_ctr_names[C_NUM][ETH_GSTRING_LEN];

static const char *const prio_fmt[SP_NUM] = {
	[SP_RX_BYTES] = "rx_prio%d_bytes",
	[SP_RX_PACKETS] = "rx_prio%d_packets",
	[SP_RX_DISCARDS] = "rx_prio%d_discards",
	[SP_TX_BYTES] = "tx_prio%d_bytes",
	[SP_TX_PACKETS] = "tx_prio%d_packets",
	[SP_RX_PAUSE] = "rx_prio%d_pause",
	[SP_RX_PAUSE_DURATION] = "rx_prio%d_pause_duration",
	[SP_TX_PAUSE] = "tx_prio%d_pause",
	[SP_TX_PAUSE_DURATION] = "tx_prio%d_pause_duration",
	[SP_RX_PAUSE_TRANSITION] = "rx_prio%d_pause_transition",
};

static const char *const tc_fmt[ST_NUM] = {
	[ST_BUF_DISCARD] = "rx_prio%d_buf_discard",
	[ST_CONG_DISCARD] = "rx_prio%d_cong_discard",
	[ST_MARKED] = "rx_prio%d_marked",
};

static const char *const global_names[C_NUM - C_GLOBAL_BASE] = {
	[C_RX_ECN_MARK - C_GLOBAL_BASE] = "rx_ecn_mark",
	[C_RX_OUT_OF_BUFFER - C_GLOBAL_BASE] = "rx_out_of_buffer",
	[C_RX_IF_DOWN_PACKETS - C_GLOBAL_BASE] = "rx_if_down_packets",
	[C_RX_VPORT_RDMA_UC_PACKETS - C_GLOBAL_BASE] =
		"rx_vport_rdma_unicast_packets",
	[C_RX_VPORT_RDMA_UC_BYTES - C_GLOBAL_BASE] =
		"rx_vport_rdma_unicast_bytes",
	[C_TX_VPORT_RDMA_UC_PACKETS - C_GLOBAL_BASE] =
		"tx_vport_rdma_unicast_packets",
	[C_TX_VPORT_RDMA_UC_BYTES - C_GLOBAL_BASE] =
		"tx_vport_rdma_unicast_bytes",
	[C_RX_CRC_ERRORS_PHY - C_GLOBAL_BASE] = "rx_crc_errors_phy",
	[C_RX_SYMBOL_ERR_PHY - C_GLOBAL_BASE] = "rx_symbol_err_phy",
	[C_RX_PAUSE_CTRL_PHY - C_GLOBAL_BASE] = "rx_pause_ctrl_phy",
	[C_TX_PAUSE_CTRL_PHY - C_GLOBAL_BASE] = "tx_pause_ctrl_phy",
	[C_RX_DISCARDS_PHY - C_GLOBAL_BASE] = "rx_discards_phy",
	[C_TX_DISCARDS_PHY - C_GLOBAL_BASE] = "tx_discards_phy",
	[C_TX_ERRORS_PHY - C_GLOBAL_BASE] = "tx_errors_phy",
	[C_LINK_DOWN_EVENTS_PHY - C_GLOBAL_BASE] = "link_down_events_phy",
	[C_RX_BUFFER_PASSED_THRES_PHY - C_GLOBAL_BASE] =
		"rx_buffer_passed_thres_phy",
	[C_STORM_WARNING - C_GLOBAL_BASE] = "tx_pause_storm_warning_events",
	[C_STORM_ERROR - C_GLOBAL_BASE] = "tx_pause_storm_error_events",
	[C_IB_RX_WRITE_REQUESTS - C_GLOBAL_BASE] = "rx_write_requests",
	[C_IB_RX_READ_REQUESTS - C_GLOBAL_BASE] = "rx_read_requests",
	[C_IB_RX_ATOMIC_REQUESTS - C_GLOBAL_BASE] = "rx_atomic_requests",
	[C_IB_RX_DCT_CONNECT - C_GLOBAL_BASE] = "rx_dct_connect",
	[C_IB_OUT_OF_BUFFER - C_GLOBAL_BASE] = "out_of_buffer",
	[C_IB_OUT_OF_SEQUENCE - C_GLOBAL_BASE] = "out_of_sequence",
	[C_IB_DUPLICATE_REQUEST - C_GLOBAL_BASE] = "duplicate_request",
	[C_IB_RNR_NAK_RETRY_ERR - C_GLOBAL_BASE] = "rnr_nak_retry_err",
	[C_IB_PACKET_SEQ_ERR - C_GLOBAL_BASE] = "packet_seq_err",
	[C_IB_IMPLIED_NAK_SEQ_ERR - C_GLOBAL_BASE] = "implied_nak_seq_err",
	[C_IB_LOCAL_ACK_TIMEOUT_ERR - C_GLOBAL_BASE] = "local_ack_timeout_err",
	[C_IB_RESP_LOCAL_LENGTH_ERROR - C_GLOBAL_BASE] =
		"resp_local_length_error",
	[C_IB_RESP_CQE_ERROR - C_GLOBAL_BASE] = "resp_cqe_error",
	[C_IB_REQ_CQE_ERROR - C_GLOBAL_BASE] = "req_cqe_error",
	[C_IB_REQ_REMOTE_INVALID_REQUEST - C_GLOBAL_BASE] =
		"req_remote_invalid_request",
	[C_IB_REQ_REMOTE_ACCESS_ERRORS - C_GLOBAL_BASE] =
		"req_remote_access_errors",
	[C_IB_RESP_REMOTE_ACCESS_ERRORS - C_GLOBAL_BASE] =
		"resp_remote_access_errors",
	[C_IB_RESP_CQE_FLUSH_ERROR - C_GLOBAL_BASE] = "resp_cqe_flush_error",
	[C_IB_REQ_CQE_FLUSH_ERROR - C_GLOBAL_BASE] = "req_cqe_flush_error",
	[C_IB_REQ_TRANSPORT_RETRIES_EXCEEDED - C_GLOBAL_BASE] =
		"req_transport_retries_exceeded",
	[C_IB_REQ_RNR_RETRIES_EXCEEDED - C_GLOBAL_BASE] =
		"req_rnr_retries_exceeded",
	[C_IB_ROCE_ADP_RETRANS - C_GLOBAL_BASE] = "roce_adp_retrans",
	[C_IB_ROCE_ADP_RETRANS_TO - C_GLOBAL_BASE] = "roce_adp_retrans_to",
	[C_IB_ROCE_SLOW_RESTART - C_GLOBAL_BASE] = "roce_slow_restart",
	[C_IB_ROCE_SLOW_RESTART_CNPS - C_GLOBAL_BASE] = "roce_slow_restart_cnps",
	[C_IB_ROCE_SLOW_RESTART_TRANS - C_GLOBAL_BASE] =
		"roce_slow_restart_trans",
	[C_IB_RP_CNP_IGNORED - C_GLOBAL_BASE] = "rp_cnp_ignored",
	[C_IB_RP_CNP_HANDLED - C_GLOBAL_BASE] = "rp_cnp_handled",
	[C_IB_NP_ECN_MARKED_ROCE_PACKETS - C_GLOBAL_BASE] =
		"np_ecn_marked_roce_packets",
	[C_IB_NP_CNP_SENT - C_GLOBAL_BASE] = "np_cnp_sent",
	[C_IB_RX_ICRC_ENCAPSULATED - C_GLOBAL_BASE] = "rx_icrc_encapsulated",
	[C_IB_CC_RX_CE_PKTS - C_GLOBAL_BASE] = "cc_rx_ce_pkts",
	[C_IB_RDMA_TX_PACKETS - C_GLOBAL_BASE] = "rdma_tx_packets",
	[C_IB_RDMA_TX_BYTES - C_GLOBAL_BASE] = "rdma_tx_bytes",
	[C_IB_RDMA_RX_PACKETS - C_GLOBAL_BASE] = "rdma_rx_packets",
	[C_IB_RDMA_RX_BYTES - C_GLOBAL_BASE] = "rdma_rx_bytes",
	[C_IB_CC_RX_CNP_PKTS - C_GLOBAL_BASE] = "cc_rx_cnp_pkts",
	[C_IB_CC_TX_CNP_PKTS - C_GLOBAL_BASE] = "cc_tx_cnp_pkts",
	[C_RX_BITS_PHY - C_GLOBAL_BASE] = "rx_bits_phy",
	[C_RX_PCS_SYMBOL_ERR_PHY - C_GLOBAL_BASE] = "rx_pcs_symbol_err_phy",
	[C_RX_ERR_LANE0_PHY - C_GLOBAL_BASE] = "rx_err_lane_0_phy",
	[C_RX_ERR_LANE0_PHY + 1 - C_GLOBAL_BASE] = "rx_err_lane_1_phy",
	[C_RX_ERR_LANE0_PHY + 2 - C_GLOBAL_BASE] = "rx_err_lane_2_phy",
	[C_RX_ERR_LANE0_PHY + 3 - C_GLOBAL_BASE] = "rx_err_lane_3_phy",
	[C_RS_FEC_CORRECTED_BLOCKS - C_GLOBAL_BASE] = "rs_fec_corrected_blocks",
	[C_RS_FEC_UNCORRECTABLE_BLOCKS - C_GLOBAL_BASE] =
		"rs_fec_uncorrectable_blocks",
	[C_FC_FEC_CORRECTED_LANE0 - C_GLOBAL_BASE] =
		"fc_fec_corrected_blocks_lane0",
	[C_FC_FEC_CORRECTED_LANE0 + 1 - C_GLOBAL_BASE] =
		"fc_fec_corrected_blocks_lane1",
	[C_FC_FEC_CORRECTED_LANE0 + 2 - C_GLOBAL_BASE] =
		"fc_fec_corrected_blocks_lane2",
	[C_FC_FEC_CORRECTED_LANE0 + 3 - C_GLOBAL_BASE] =
		"fc_fec_corrected_blocks_lane3",
	/* fc_fec_uncorrectable_blocks_laneN: too long for ETH_GSTRING_LEN */
	[C_FC_FEC_UNCORRECTABLE_LANE0 - C_GLOBAL_BASE] =
		"fc_fec_uncorr_blocks_lane0",
	[C_FC_FEC_UNCORRECTABLE_LANE0 + 1 - C_GLOBAL_BASE] =
		"fc_fec_uncorr_blocks_lane1",
	[C_FC_FEC_UNCORRECTABLE_LANE0 + 2 - C_GLOBAL_BASE] =
		"fc_fec_uncorr_blocks_lane2",
	[C_FC_FEC_UNCORRECTABLE_LANE0 + 3 - C_GLOBAL_BASE] =
		"fc_fec_uncorr_blocks_lane3",
};

void simnic_ctr_names_init(void)
{
	int p, k, i;

	for (p = 0; p < SIMNIC_NUM_PRIO; p++)
		for (k = 0; k < SP_NUM; k++)
			snprintf(simnic_ctr_names[C_PRIO(p, k)], ETH_GSTRING_LEN,
				 prio_fmt[k], p);
	for (p = 0; p < SIMNIC_NUM_TC; p++)
		for (k = 0; k < ST_NUM; k++)
			snprintf(simnic_ctr_names[C_TC(p, k)], ETH_GSTRING_LEN,
				 tc_fmt[k], p);
	for (i = C_GLOBAL_BASE; i < C_NUM; i++)
		strscpy(simnic_ctr_names[i], global_names[i - C_GLOBAL_BASE],
			ETH_GSTRING_LEN);
}

int simnic_ctr_lookup(const char *name)
{
	int i;

	for (i = 0; i < C_NUM; i++)
		if (!strcmp(simnic_ctr_names[i], name))
			return i;
	return -ENOENT;
}

u64 simnic_now(void)
{
	return ktime_get_ns();
}

/* rate (per second) integrated over dt nanoseconds; wraps like hardware. */
static u64 integrate(u64 rate, u64 dt)
{
	u32 rem;
	u64 secs = div_u64_rem(dt, NSEC_PER_SEC, &rem);

	return rate * secs + mul_u64_u32_div(rate, rem, NSEC_PER_SEC);
}

#define SIMNIC_FULL_PAUSE_RATE 1000000ULL /* pause duration is in us */

/* The storm, if any, that drives counter id (each counter has at most one). */
static struct simnic_storm *storm_of(struct simnic_port *port, int id)
{
	int prio, kind;
	struct simnic_storm *s;

	if (id >= C_TC_BASE)
		return NULL;
	prio = id / SP_NUM;
	kind = id % SP_NUM;
	switch (kind) {
	case SP_TX_PAUSE:
	case SP_TX_PAUSE_DURATION:
	case SP_RX_PACKETS:
	case SP_RX_BYTES:
	case SP_RX_DISCARDS:
		s = &port->storm[SIMNIC_TX][prio];
		break;
	case SP_RX_PAUSE:
	case SP_RX_PAUSE_DURATION:
	case SP_TX_PACKETS:
	case SP_TX_BYTES:
		s = &port->storm[SIMNIC_RX][prio];
		break;
	default:
		return NULL;
	}
	return s->active ? s : NULL;
}

/*
 * Effective rate of a storm-driven counter.  Phase 0 is the storm proper,
 * phase 1 starts at the critical watermark (TX storms with stall prevention):
 * the firmware stops pausing and drops what it cannot receive.
 */
static u64 storm_rate(struct simnic_port *port, struct simnic_storm *s,
		      int id, int phase)
{
	int prio = id / SP_NUM;
	int kind = id % SP_NUM;
	u64 user = port->ctr[id].rate;

	switch (kind) {
	case SP_TX_PAUSE:
	case SP_RX_PAUSE:
		return phase ? user : s->pause_rate;
	case SP_TX_PAUSE_DURATION:
	case SP_RX_PAUSE_DURATION:
		return phase ? user : SIMNIC_FULL_PAUSE_RATE;
	case SP_RX_PACKETS:
	case SP_RX_BYTES:
	case SP_TX_PACKETS:
	case SP_TX_BYTES:
		return phase ? user : 0;
	case SP_RX_DISCARDS:
		return phase ? user + port->ctr[C_PRIO(prio, SP_RX_PACKETS)].rate
			     : user;
	}
	return user;
}

/* Storm events (mlx5 device_stall_{minor,critical}_watermark_cnt) so far. */
static u64 storm_events(struct simnic_port *port, int id, u64 now)
{
	u64 n = 0;
	int p;

	for (p = 0; p < SIMNIC_NUM_PRIO; p++) {
		struct simnic_storm *s = &port->storm[SIMNIC_TX][p];

		if (!s->active)
			continue;
		if (id == C_STORM_WARNING && now >= s->t_minor)
			n++;
		if (id == C_STORM_ERROR && now >= s->t_crit)
			n++;
	}
	return n;
}

static u64 rate_part(struct simnic_port *port, int id, u64 now)
{
	struct simnic_ctr *c = &port->ctr[id];
	struct simnic_storm *s;
	u64 v = 0, a_end, b_start;

	if (!port->running || now <= c->t_ref)
		return 0;
	s = storm_of(port, id);
	if (!s)
		return integrate(c->rate, now - c->t_ref);
	a_end = min(now, s->t_crit);
	if (a_end > c->t_ref)
		v += integrate(storm_rate(port, s, id, 0), a_end - c->t_ref);
	b_start = max(c->t_ref, s->t_crit);
	if (now > b_start)
		v += integrate(storm_rate(port, s, id, 1), now - b_start);
	return v;
}

/* Full 64-bit value; caller holds port->lock. */
u64 simnic_ctr_value(struct simnic_port *port, int id, u64 now)
{
	u64 v = port->ctr[id].base + rate_part(port, id, now);

	if (id == C_STORM_WARNING || id == C_STORM_ERROR)
		v += storm_events(port, id, now);
	return v;
}

/* The value as the device reports it: mlx5 Q counters are 32 bits wide. */
u64 simnic_ctr_report(struct simnic_port *port, int id, u64 now)
{
	u64 v = simnic_ctr_value(port, id, now);

	return simnic_ctr_is_32bit(id) ? (u32)v : v;
}

u64 simnic_ctr_eff_rate(struct simnic_port *port, int id, u64 now)
{
	struct simnic_storm *s;

	if (!port->running)
		return 0;
	s = storm_of(port, id);
	if (!s)
		return port->ctr[id].rate;
	return storm_rate(port, s, id, now >= s->t_crit);
}

void simnic_ctr_fold(struct simnic_port *port, int id, u64 now)
{
	struct simnic_ctr *c = &port->ctr[id];

	c->base += rate_part(port, id, now);
	c->t_ref = now;
}

void simnic_ctr_fold_all(struct simnic_port *port, u64 now)
{
	int i;

	for (i = 0; i < C_NUM; i++)
		simnic_ctr_fold(port, i, now);
}

void simnic_ctr_set(struct simnic_port *port, int id, u64 value, u64 now)
{
	u64 ev = 0;

	simnic_ctr_fold(port, id, now);
	if (id == C_STORM_WARNING || id == C_STORM_ERROR)
		ev = storm_events(port, id, now);
	port->ctr[id].base = value > ev ? value - ev : 0;
}

void simnic_ctr_add(struct simnic_port *port, int id, u64 delta, u64 now)
{
	simnic_ctr_fold(port, id, now);
	port->ctr[id].base += delta;
}

void simnic_ctr_set_rate(struct simnic_port *port, int id, u64 rate, u64 now)
{
	struct simnic_storm *s;
	int prio;

	simnic_ctr_fold(port, id, now);
	/* rx_prioN_discards of a TX storm depends on rx_prioN_packets' rate */
	if (id < C_TC_BASE && id % SP_NUM == SP_RX_PACKETS) {
		prio = id / SP_NUM;
		s = &port->storm[SIMNIC_TX][prio];
		if (s->active)
			simnic_ctr_fold(port, C_PRIO(prio, SP_RX_DISCARDS), now);
	}
	port->ctr[id].rate = rate;
}

u64 simnic_sum_prio(struct simnic_port *port, int kind, u64 now)
{
	u64 sum = 0;
	int p;

	for (p = 0; p < SIMNIC_NUM_PRIO; p++)
		sum += simnic_ctr_value(port, C_PRIO(p, kind), now);
	return sum;
}

static void fold_prio(struct simnic_port *port, int prio, u64 now)
{
	int k;

	for (k = 0; k < SP_NUM; k++)
		simnic_ctr_fold(port, C_PRIO(prio, k), now);
}

/* Caller holds port->lock. */
int simnic_storm_start(struct simnic_port *port, int prio, int dir, u64 rate,
		       u64 now)
{
	struct simnic_storm *s = &port->storm[dir][prio];

	if (s->active)
		return -EBUSY;
	if (!port->running)
		return -ENETDOWN;
	fold_prio(port, prio, now);
	s->t0 = now;
	s->pause_rate = rate;
	s->t_minor = U64_MAX;
	s->t_crit = U64_MAX;
	if (dir == SIMNIC_TX && port->stall_critical_ms) {
		s->t_minor = now + (u64)port->stall_minor_ms * NSEC_PER_MSEC;
		s->t_crit = now + (u64)port->stall_critical_ms * NSEC_PER_MSEC;
	}
	s->active = true;
	return 0;
}

/* Caller holds port->lock. */
int simnic_storm_stop(struct simnic_port *port, int prio, int dir, u64 now)
{
	struct simnic_storm *s = &port->storm[dir][prio];

	if (!s->active)
		return -ENOENT;
	fold_prio(port, prio, now);
	if (dir == SIMNIC_TX) {
		port->ctr[C_STORM_WARNING].base += now >= s->t_minor;
		port->ctr[C_STORM_ERROR].base += now >= s->t_crit;
	} else {
		/* the peer finally sends XON: one XOFF->XON transition */
		port->ctr[C_PRIO(prio, SP_RX_PAUSE_TRANSITION)].base++;
	}
	s->active = false;
	return 0;
}

void simnic_storm_stop_all(struct simnic_port *port, u64 now)
{
	int d, p;

	for (d = 0; d < 2; d++)
		for (p = 0; p < SIMNIC_NUM_PRIO; p++)
			simnic_storm_stop(port, p, d, now);
}
