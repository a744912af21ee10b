# shellcheck shell=sh
# Guest helpers for the simulated ConnectX (busybox sh). The testbed runner copies this file to
# /testbed/simnic-lib.sh; a scenario that wants them runs `. /testbed/simnic-lib.sh`.
# tests/testbed/simnic/README.md documents the control file these read.

SIMNIC_DEBUGFS=${SIMNIC_DEBUGFS:-/sys/kernel/debug/simnic}

# simnic_value NETDEV COUNTER: the counter as the device reports it (Q counters wrap at 2^32).
simnic_value() {
  awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }' "$SIMNIC_DEBUGFS/$1/ctl"
}
# simnic_rate NETDEV COUNTER: the rate the counter currently advances at (per second; 0 while
# the port is down; storms override the rates of the counters they drive).
simnic_rate() {
  awk -v n="$2" '$1 == n { print $3; f = 1 } END { exit !f }' "$SIMNIC_DEBUGFS/$1/ctl"
}
# simnic_state NETDEV KEY: one field of the "# state" line (running, cable, carrier, pfc_en,
# pause_rx, pause_tx, trust, dscp_apps, dcbx, dcbx_cap, cable_len, stall_ms, ecn_np, ecn_rp).
simnic_state() {
  sed -n 's/^# state //p' "$SIMNIC_DEBUGFS/$1/ctl" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# simnic_storm_phase NETDEV PRIO DIR: pausing|warning|prevented, or nothing without a storm.
simnic_storm_phase() {
  sed -n "s/^# storm prio=$2 dir=$3 .*phase=//p" "$SIMNIC_DEBUGFS/$1/ctl"
}
# DCB netlink notifications seen for NETDEV (the module keeps the last 64 of all devices):
# simnic_dcb_event_seq NETDEV: sequence number of the latest one (0 if none; compare before and
# after an action); simnic_last_dcb_event NETDEV: e.g. "RTM_SETDCB IEEE_SET sim0".
simnic_dcb_event_seq() {
  tail -n 1 "$SIMNIC_DEBUGFS/$1/dcb_events" | awk '{ s = $1 } END { print s + 0 }'
}
simnic_last_dcb_event() { tail -n 1 "$SIMNIC_DEBUGFS/$1/dcb_events" | cut -d' ' -f2-; }
# simnic_dcb_sets_after NETDEV SEQ: how many RTM_SETDCB notifications about NETDEV carry a sequence
# number above SEQ (taken with simnic_dcb_event_seq; 0 right after a module load, which restarts
# the numbering). Each DCB_CMD_IEEE_SET/IEEE_DEL a writer sends is one, even a failed one; control
# file changes are none, so a scenario that changes state only through the control file and sysfs
# counts exactly the writes of everything else. The module keeps the last 64 notifications of all
# devices: read it before more than 64 can have come (a count of 0 is exact as long as no other
# device was notified 64 times since, as NETDEV's latest one would still be listed).
simnic_dcb_sets_after() {
  awk -v s="$2" '$1 > s + 0 && $2 == "RTM_SETDCB" { n++ } END { print n + 0 }' "$SIMNIC_DEBUGFS/$1/dcb_events"
}
