// SPDX-License-Identifier: GPL-2.0
/*
 * Firmware command latency.  On mlx5 a statistics read is not a memory copy:
 * ETHTOOL_GSTATS runs mlx5e_stats_update(), about 40 firmware commands
 * (PPCNT per group, QUERY_VPORT_COUNTER, QUERY_Q_COUNTER, ...) under RTNL, the
 * RDMA hw counters query the Q and congestion counters, and each dcbnl IEEE
 * get reads a register (QTCT/QETCR, PFCC, PBMC).  simnic answers at once
 * unless told otherwise: these knobs make every such read sleep, so the
 * exporter's sampling budget (--sampler.budget) can be exercised.
 *
 * One "read" is one driver callback: get_ethtool_stats, get_pause_stats,
 * get_hw_stats (stats), ieee_getets, ieee_getpfc, ieee_getmaxrate,
 * dcbnl_getbuffer (qos).  The callbacks run in process context (RTNL or the
 * RDMA stats mutex held, no spinlock), where mlx5 sleeps on the command
 * completion too.
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>

#include "simnic.h"

#define SIMNIC_FW_LATENCY_MAX_US 10000000 /* 10 s: a stuck command, not a hang */

static unsigned int fw_stats_latency_us;
module_param(fw_stats_latency_us, uint, 0644);
MODULE_PARM_DESC(fw_stats_latency_us,
		 "Sleep per statistics read (GSTATS, pause stats; RDMA hw counters a tenth), us; runtime-writable; ctl 'fw_latency' overrides per port");
static unsigned int fw_qos_latency_us;
module_param(fw_qos_latency_us, uint, 0644);
MODULE_PARM_DESC(fw_qos_latency_us,
		 "Sleep per DCB query (getets, getpfc, getmaxrate, getbuffer), us; runtime-writable; ctl 'fw_latency' overrides per port");

void simnic_fw_latency_init(struct simnic_port *port)
{
	port->fw_latency_us[SIMNIC_FW_STATS] = -1;
	port->fw_latency_us[SIMNIC_FW_QOS] = -1;
}

unsigned int simnic_fw_latency(struct simnic_port *port,
			       enum simnic_fw_kind kind)
{
	int us = READ_ONCE(port->fw_latency_us[kind]);

	if (us < 0)
		us = kind == SIMNIC_FW_STATS ? READ_ONCE(fw_stats_latency_us) :
					       READ_ONCE(fw_qos_latency_us);
	return min_t(unsigned int, us, SIMNIC_FW_LATENCY_MAX_US);
}

/*
 * How late a short sleep ends: the hrtimer's wake-up latency, which under a
 * TCG guest is 0.3-0.5 ms, a quarter of a 2 ms model.  Each sleep is shortened
 * by the lateness seen so far (an integral controller: 1/8 of each error), so
 * a read costs the modelled latency on average, as the exporter's duty-cycle
 * figures are stated per modelled millisecond; the selftest checks the mean.
 */
static atomic64_t fw_sleep_late_ns = ATOMIC64_INIT(0);

static void simnic_fw_sleep(struct simnic_port *port, unsigned int us)
{
	s64 want = (s64)us * NSEC_PER_USEC, late, error;
	ktime_t start;

	/* Model time: what the reads would cost on the NIC, whatever the
	 * sleep costs under TCG (tests/testbed/scenarios/adaptive-sampling.sh).
	 */
	atomic64_inc(&port->fw_calls);
	atomic64_add(want, &port->fw_model_ns);
	if (!us)
		return;
	might_sleep();
	if (us >= 20000) { /* Documentation/timers/timers-howto.rst */
		msleep(DIV_ROUND_UP(us, 1000));
		return;
	}
	late = clamp_t(s64, atomic64_read(&fw_sleep_late_ns), 0, want);
	start = ktime_get();
	if (want - late >= NSEC_PER_USEC) {
		unsigned long sleep_us = div_s64(want - late, NSEC_PER_USEC);

		usleep_range(sleep_us, sleep_us); /* no slack: the wake is late enough */
	}
	error = ktime_to_ns(ktime_sub(ktime_get(), start)) - want;
	atomic64_add(div_s64(error, 8), &fw_sleep_late_ns);
	atomic64_inc(&port->fw_sleeps);
	atomic64_add(error, &port->fw_sleep_error_ns);
}

void simnic_fw_delay(struct simnic_port *port, enum simnic_fw_kind kind)
{
	simnic_fw_sleep(port, simnic_fw_latency(port, kind));
}

/*
 * The RDMA hw counters query is QUERY_Q_COUNTER plus the congestion counters
 * (mlx5_ib_get_hw_stats), a few firmware commands against the ~24-40 of one
 * ETHTOOL_GSTATS: it sleeps a tenth of the statistics latency.
 */
void simnic_fw_delay_rdma_stats(struct simnic_port *port)
{
	simnic_fw_sleep(port, simnic_fw_latency(port, SIMNIC_FW_STATS) / 10);
}

int simnic_fw_latency_set(struct simnic_port *port, enum simnic_fw_kind kind,
			  int us)
{
	if (us > SIMNIC_FW_LATENCY_MAX_US || us < -1)
		return -ERANGE;
	WRITE_ONCE(port->fw_latency_us[kind], us);
	return 0;
}

/*
 * One firmware register access (PPCNT, PPLM), as each link.c op makes: one
 * command of the ~24-40 of an ETHTOOL_GSTATS, so 1/24 of the statistics
 * latency (the costly end).
 */
void simnic_fw_delay_reg(struct simnic_port *port)
{
	simnic_fw_sleep(port, simnic_fw_latency(port, SIMNIC_FW_STATS) / 24);
}
