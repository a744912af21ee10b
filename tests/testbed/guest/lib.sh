# shellcheck shell=sh disable=SC2034 # variables and functions here are for the scenarios
# Helpers for testbed scenarios (sourced by every scenario and every guest-exec command; busybox
# sh). tests/testbed/README.md documents them; keep the two in sync.

# busybox sh runs its own `ip`/`tc` applets before anything in PATH: these functions and variables
# make scripts get the real iproute2 and ethtool. Use the $IP-style variables where a function
# cannot reach (timeout, xargs, nsenter, ...).
IP=/usr/sbin/ip
TC=/usr/sbin/tc
DCB=/usr/sbin/dcb
RDMA=/usr/bin/rdma
ETHTOOL=/usr/sbin/ethtool
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }
# iproute2 6.1 `dcb ... set` reads the current value first with NLM_F_ACK but stops at the reply,
# leaving the ACK queued; the SET then reads that stale ACK. Its sequence number is time(NULL), so
# when the two requests straddle a second boundary libmnl rejects the stale ACK with EPROTO
# ("Protocol error") although the kernel applied the SET. Retry once on exactly that error; the
# sets scenarios use are idempotent, and scenarios read every value back anyway.
dcb() {
  _dcb_err=$TESTBED_WORK/.dcb.err.$$
  if /usr/sbin/dcb "$@" 2>"$_dcb_err"; then
    cat "$_dcb_err" >&2
    rm -f "$_dcb_err"
    return 0
  fi
  if grep -q "Protocol error" "$_dcb_err"; then
    rm -f "$_dcb_err"
    /usr/sbin/dcb "$@"
    return
  fi
  cat "$_dcb_err" >&2
  rm -f "$_dcb_err"
  return 1
}
rdma() { /usr/bin/rdma "$@"; }
ethtool() { /usr/sbin/ethtool "$@"; }

EXPORTER=/testbed/bin/roce_qos_exporter
EXPORTER_PORT=${EXPORTER_PORT:-9879}
EXPORTER_URL=http://127.0.0.1:$EXPORTER_PORT
SIMNIC_DEBUGFS=/sys/kernel/debug/simnic
TESTBED_WORK=${TESTBED_WORK:-/tmp}

# --- verdicts -----------------------------------------------------------------------------------
log() { echo "# $*" >&2; }
fail() {
  echo "FAIL: $*" >&2
  # The exporter's own account of the failure, when a scenario ran one.
  if [ -s "${EXPORTER_LOG:-}" ]; then
    echo "--- last exporter log lines:" >&2
    tail -n 15 "$EXPORTER_LOG" | cut -c1-400 >&2
  fi
  exit 1
}
# Exit status 77: the runner reports SKIP (not a failure) unless TESTBED_STRICT=1.
skip() {
  echo "SKIP: $*"
  [ "${TESTBED_STRICT:-0}" = 1 ] && fail "skip not allowed with TESTBED_STRICT=1: $*"
  exit 77
}
assert_eq() { [ "$1" = "$2" ] || fail "${3:-assert_eq}: expected '$1', got '$2'"; }
assert_ne() { [ "$1" != "$2" ] || fail "${3:-assert_ne}: both are '$1'"; }
assert_match() { echo "$2" | grep -Eq -- "$1" || fail "${3:-assert_match}: '$2' does not match /$1/"; }
# Numeric comparison (exposition values may be written 1.5e+06); exact for integers below 2^53.
# kernel_at_least MAJOR.MINOR: the running kernel is that series or newer (docs/kernels.md).
kernel_at_least() {
  uname -r | awk -F'[.-]' -v want="$1" '{ split(want, w, ".")
    exit !($1 > w[1] || ($1 == w[1] && $2 >= w[2])) }'
}
num_eq() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0 && a != "" && b != "") }'; }
assert_num_eq() { num_eq "$1" "$2" || fail "${3:-assert_num_eq}: expected $1, got $2"; }

# now_s: CLOCK_REALTIME as seconds with a fraction (busybox date has no %N), the clock the
# exporter's log and its *_timestamp_seconds use. adjtimex(2) gives tv_usec in nanoseconds when
# STA_NANO (0x2000) is set in the status (an NTP daemon may have set it).
now_s() {
  busybox adjtimex | awk '/status:/ { nano = int($2 / 8192) % 2 } /tv_sec/ { s = $2 } /tv_usec/ { u = $2 }
    END { printf "%d.%06d", s, nano ? int(u / 1000) : u }'
}

# uptime_cs: the uptime in centiseconds in $_cs, by the read builtin: no process, which under TCG
# costs more than most of the checks a wait polls (10 ms resolution; the guest is up for > 1 s, so
# no leading zero makes it octal).
uptime_cs() {
  read -r _u _ </proc/uptime
  _cs=${_u%.*}${_u#*.}
}

# wait_for TIMEOUT_S CMD [ARG...]: runs CMD until it succeeds (status 0) or TIMEOUT_S (whole)
# seconds passed (status 1): every 0.1 s for the first 2 s, then every 0.25 s, so a long wait
# costs the guest (one TCG vCPU, on a host the other CI lanes share) a fraction of the processes.
# Use: wait_for 5 some_check || fail "..."
wait_for() {
  uptime_cs
  _wf_start=$_cs
  _wf_deadline=$((_cs + $1 * 100))
  shift
  while :; do
    "$@" && return 0
    uptime_cs
    [ "$_cs" -ge "$_wf_deadline" ] && return 1
    if [ $((_cs - _wf_start)) -lt 200 ]; then sleep 0.1; else sleep 0.25; fi
  done
}

# require exporter|simnic|rxe: skips the scenario when the piece is missing from this build.
require() {
  for _r in "$@"; do
    case $_r in
      exporter)
        [ -x "$EXPORTER" ] || skip "roce_qos_exporter is not in the guest (not built on the host)"
        # The skeleton's placeholder binary prints its version and exits: not a real exporter yet.
        "$EXPORTER" --help 2>&1 | grep -q -- --web.listen-address ||
          skip "roce_qos_exporter does not serve metrics yet (placeholder build)"
        ;;
      simnic) [ -n "$TESTBED_SIMNIC" ] || skip "simnic.ko is not built (tests/testbed/simnic absent)" ;;
      rxe) $RDMA link show rxe0/1 >/dev/null 2>&1 || fail "rxe0 is missing from the baseline" ;;
      *) fail "require: unknown piece $_r" ;;
    esac
  done
}

# --- the exporter -------------------------------------------------------------------------------
# start_exporter [FLAG...]: starts the exporter in the background (log: $EXPORTER_LOG) listening on
# :$EXPORTER_PORT, and waits until /-/ready answers 200. Sets EXPORTER_PID and writes it to
# $EXPORTER_PIDFILE, so a later guest-exec call (another shell) can check or stop it.
EXPORTER_LOG=$TESTBED_WORK/exporter.log
EXPORTER_PIDFILE=/run/testbed-exporter.pid
start_exporter() {
  require exporter
  case " $* " in
    *" --web.listen-address"*) ;;
    *) set -- "--web.listen-address=:$EXPORTER_PORT" "$@" ;;
  esac
  log "starting roce_qos_exporter $*"
  "$EXPORTER" "$@" >>"$EXPORTER_LOG" 2>&1 &
  EXPORTER_PID=$!
  echo "$EXPORTER_PID" >"$EXPORTER_PIDFILE"
  wait_for 20 _exporter_ready || {
    kill -0 "$EXPORTER_PID" 2>/dev/null || {
      wait "$EXPORTER_PID"
      _rc=$?
    }
    tail -n 30 "$EXPORTER_LOG" >&2
    fail "exporter not ready within 20 s (exit status ${_rc:-still running})"
  }
}
_exporter_pid() { echo "${EXPORTER_PID:-$(cat "$EXPORTER_PIDFILE" 2>/dev/null)}"; }
_exporter_ready() {
  kill -0 "$EXPORTER_PID" 2>/dev/null || return 1
  timeout 30 wget -q -O /dev/null "$EXPORTER_URL/-/ready" 2>/dev/null
}
# exporter_alive: fails the scenario (with the log tail) if the exporter has exited.
exporter_alive() {
  _p=$(_exporter_pid)
  [ -n "$_p" ] && kill -0 "$_p" 2>/dev/null && return 0
  tail -n 30 "$EXPORTER_LOG" >&2
  fail "the exporter (pid ${_p:-none}) is not running"
}
# stop_exporter: SIGTERM, then waits up to 10 s; fails unless it exits (with status 0, when this
# shell started it and can see the status).
stop_exporter() {
  _p=$(_exporter_pid)
  [ -n "$_p" ] || return 0
  exporter_alive
  kill -TERM "$_p"
  wait_for 10 _gone "$_p" || fail "exporter did not exit within 10 s of SIGTERM"
  rm -f "$EXPORTER_PIDFILE"
  if [ -n "$EXPORTER_PID" ]; then
    wait "$EXPORTER_PID"
    _rc=$?
    EXPORTER_PID=
    [ "$_rc" -eq 0 ] || {
      tail -n 30 "$EXPORTER_LOG" >&2
      fail "exporter exited with status $_rc on SIGTERM"
    }
  fi
}

# --- metrics ------------------------------------------------------------------------------------
# scrape [FILE]: GET /metrics into FILE (default $METRICS); fails the scenario if it cannot, or if
# the exporter does not answer within 30 s (`timeout`, not `wget -T`: busybox 1.35 wget -T
# segfaults when the connection is refused).
METRICS=$TESTBED_WORK/metrics.txt
scrape() {
  timeout 30 wget -q -O "${1:-$METRICS}" "$EXPORTER_URL/metrics" || fail "GET $EXPORTER_URL/metrics failed"
}
# metric_series FILE NAME: one line per series of NAME: "label=value,label=value VALUE" (labels
# sorted, quotes removed; "" when the series has no labels).
metric_series() {
  awk -v name="$2" '
    /^#/ { next }
    {
      line = $0
      brace = index(line, "{")
      sp = index(line, " ")
      if (brace > 0 && brace < sp) {
        n = substr(line, 1, brace - 1)
        close_at = index(line, "} ")
        labels = substr(line, brace + 1, close_at - brace - 1)
        rest = substr(line, close_at + 2)
      } else {
        n = substr(line, 1, sp - 1); labels = ""; rest = substr(line, sp + 1)
      }
      if (n != name) next
      split(rest, v, " ")
      cnt = split(labels, parts, /",/)
      out = ""
      for (i = 1; i <= cnt; i++) { p = parts[i]; if (p == "") continue; sub(/^,/, "", p); gsub(/"/, "", p); keys[i] = p }
      # insertion sort of the label pairs so callers can compare series textually
      for (i = 2; i <= cnt; i++) { k = keys[i]; j = i - 1; while (j > 0 && keys[j] > k) { keys[j + 1] = keys[j]; j-- } keys[j + 1] = k }
      for (i = 1; i <= cnt; i++) if (keys[i] != "") out = out (out == "" ? "" : ",") keys[i]
      for (i in keys) delete keys[i]
      print out " " v[1]
    }' "$1"
}
# _series_matching FILE NAME [label=value...]: the metric_series lines whose labels include every
# pair. The value is the text after the last space: an unlabelled series is " VALUE", which
# `read _l _v` would strip into the label field and leave the value empty.
_series_matching() {
  _sm_file=$1
  _sm_name=$2
  shift 2
  metric_series "$_sm_file" "$_sm_name" | while IFS= read -r _sm_line; do
    _sm_labels=${_sm_line% *}
    _sm_ok=1
    for _p in "$@"; do
      case ",$_sm_labels," in *",$_p,"*) ;; *) _sm_ok=0 ;; esac
    done
    [ "$_sm_ok" = 1 ] && echo "$_sm_line"
  done
}
# metric_from FILE NAME [label=value...]: the value of the one series of NAME whose labels include
# all the given pairs. Status 1 (no output) if none matches; fails the scenario if several match.
metric_from() {
  _mf_file=$1
  _mf_name=$2
  shift 2
  _mf_out=$(_series_matching "$_mf_file" "$_mf_name" "$@" | while IFS= read -r _s; do
    echo "${_s##* }"
  done)
  [ -n "$_mf_out" ] || return 1
  [ "$(echo "$_mf_out" | wc -l)" -eq 1 ] || fail "metric $_mf_name{$*} matches several series"
  echo "$_mf_out"
}
# metric_label FILE NAME LABEL [label=value...]: the value of LABEL on the one matching series.
metric_label() {
  _ml_file=$1
  _ml_name=$2
  _ml_label=$3
  shift 3
  _ml_out=$(_series_matching "$_ml_file" "$_ml_name" "$@" | while IFS= read -r _s; do
    echo "${_s% *}" | tr ',' '\n' | sed -n "s/^$_ml_label=//p"
  done)
  [ "$(echo "$_ml_out" | wc -l)" -le 1 ] || fail "metric $_ml_name{$*} matches several series"
  echo "$_ml_out"
}
# metric NAME [label=value...]: scrapes now and prints the value (see metric_from).
metric() {
  scrape "$TESTBED_WORK/metric.$$"
  metric_from "$TESTBED_WORK/metric.$$" "$@"
}

# --- independent tools (the oracle) -------------------------------------------------------------
# rdma_counters DEV/PORT: "name value" per hw counter, from `rdma statistic show link`.
rdma_counters() {
  $RDMA statistic show link "$1" | awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}
rdma_counter() { rdma_counters "$1" | awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }'; }
# ethtool_stats DEV: "name value" per `ethtool -S` line.
ethtool_stats() {
  $ETHTOOL -S "$1" | awk -F': ' 'NR > 1 { gsub(/^ +/, "", $1); print $1, $2 }'
}
ethtool_stat() { ethtool_stats "$1" | awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }'; }
# sysfs_counter DEV PORT NAME: /sys/class/infiniband/DEV/ports/PORT/hw_counters/NAME.
sysfs_counter() { cat "/sys/class/infiniband/$1/ports/$2/hw_counters/$3"; }

# --- simulated NIC (tests/testbed/simnic/README.md documents its control file) -------------------
# simnic_ctl NETDEV COMMANDS: writes COMMANDS to the netdev's debugfs control file.
simnic_ctl() {
  [ -w "$SIMNIC_DEBUGFS/$1/ctl" ] || fail "no simnic control file for $1"
  printf '%s\n' "$2" >"$SIMNIC_DEBUGFS/$1/ctl" || fail "simnic $1: '$2' rejected"
}
# simnic_netdevs: the netdevs the simulated NIC created.
simnic_netdevs() { ls "$SIMNIC_DEBUGFS" 2>/dev/null; }
# simnic_conform_default_policy NETDEV IBDEV: puts a simnic port in the embedded default policy's
# state (trust dscp with DSCP 24/26 -> 3 and 48 -> 6, PFC on 3 only, DCQCN NP/RP on 3 only, CNPs on
# DSCP 48 / priority 6, ToS 106 on IBDEV/1, tcp_ecn 1), so only what a scenario changes can drift.
simnic_conform_default_policy() {
  dcb pfc set dev "$1" prio-pfc all:off 3:on
  dcb app add dev "$1" dscp-prio 24:3 26:3 48:6
  for _p in 0 1 2 3 4 5 6 7; do
    _v=0
    [ "$_p" = 3 ] && _v=1
    echo $_v >/sys/class/net/"$1"/ecn/roce_np/enable/$_p
    echo $_v >/sys/class/net/"$1"/ecn/roce_rp/enable/$_p
  done
  echo 48 >/sys/class/net/"$1"/ecn/roce_np/cnp_dscp
  echo 6 >/sys/class/net/"$1"/ecn/roce_np/cnp_802p_prio
  echo 106 >/sys/class/infiniband/"$2"/tc/1/traffic_class
  sysctl -qw net.ipv4.tcp_ecn=1
}

# simnic_load_ports N [PARAM=VALUE...]: reloads simnic with N ports (and the module parameters
# given), waits for their netdevs, sets them up with PFC on priority 3 only.
simnic_load_ports() {
  _n=$1
  shift
  rmmod simnic 2>/dev/null
  modprobe simnic num_ports="$_n" "$@" || fail "cannot load simnic with $_n ports ($*)"
  wait_for 20 sh -c "[ \$(ls /sys/class/net | grep -c '^sim') -ge $_n ]" || fail "$_n simnic netdevs did not appear"
  for _nd in $(simnic_netdevs); do
    ip link set "$_nd" up
    dcb pfc set dev "$_nd" prio-pfc all:off 3:on || fail "dcb pfc set $_nd"
  done
}

# --- Soft-RoCE traffic --------------------------------------------------------------------------
# rxe_traffic [COUNT]: COUNT rping round trips over rxe0 (loopback on veth0's address).
RXE_ADDR=192.168.77.1
rxe_traffic() {
  _n=${1:-20}
  rping -s -a "$RXE_ADDR" -C "$_n" >"$TESTBED_WORK/rping-server.log" 2>&1 &
  _srv=$!
  # The server listens asynchronously; the client retries until it connects.
  wait_for 10 rping -c -a "$RXE_ADDR" -C "$_n" -S 1024 >"$TESTBED_WORK/rping-client.log" 2>&1 ||
    fail "rping over rxe0 failed: $(tail -n 3 "$TESTBED_WORK/rping-client.log")"
  # The client's status is the verdict (it verifies every round trip); the server may report the
  # client's disconnect as an error after the last one, so only make sure it is gone.
  wait_for 5 _gone "$_srv" || kill "$_srv" 2>/dev/null
  wait "$_srv" 2>/dev/null
  return 0
}
_gone() { ! kill -0 "$1" 2>/dev/null; }

# --- workloads: processes holding QPs in the cgroups kubelet and Slurm make (docs/attribution.md)
# workload_rxe NETDEV ADDR IBDEV: Soft-RoCE IBDEV over NETDEV, with ADDR/24 on NETDEV (idempotent).
# simnic's own RDMA devices hold no QP; an rxe device over the same netdev does.
workload_rxe() {
  ip addr show dev "$1" | grep -q "inet $2/" || ip addr add "$2/24" dev "$1" || fail "ip addr add $2 on $1"
  rdma link show "$3/1" >/dev/null 2>&1 || rdma link add "$3" type rxe netdev "$1" || fail "rdma link add $3 netdev $1"
}
# workload_pod_cgroup NAMESPACE NAME UID: prints the cgroup of a containerd container of pod UID
# (kubelet's systemd cgroup driver, BestEffort QoS) after creating it and the pod's log directory
# /var/log/pods/NAMESPACE_NAME_UID, as kubelet and containerd would.
workload_pod_cgroup() {
  _cg_mount
  _wc=/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$(echo "$3" | tr - _).slice
  _wc=$_wc/cri-containerd-$(echo "$3" | tr -d - | cut -c1-32)$(echo "$3" | tr -d - | cut -c1-32).scope
  mkdir -p "$_wc" "/var/log/pods/$1_$2_$3" || fail "cannot create the cgroup of pod $1/$2"
  echo "$_wc"
}
# workload_slurm_cgroup JOB: prints the cgroup of task 0 of step 0 of Slurm job JOB (slurmstepd's
# cgroup/v2 layout) after creating it.
workload_slurm_cgroup() {
  _cg_mount
  _wc=/sys/fs/cgroup/system.slice/slurmstepd.scope/job_$1/step_0/user/task_0
  mkdir -p "$_wc" || fail "cannot create the cgroup of Slurm job $1"
  echo "$_wc"
}
_cg_mount() {
  [ -f /sys/fs/cgroup/cgroup.procs ] || mount -t cgroup2 none /sys/fs/cgroup ||
    fail "cannot mount cgroup2 at /sys/fs/cgroup"
}
# workload_qps CGROUP IBDEV TCPPORT NAME: a process holding one idle QP on IBDEV port 1, moved
# into CGROUP before it execs: an ibv_rc_pingpong server, which creates its QP (moved to INIT on
# port 1) and then waits for a peer on TCPPORT that never comes, so it costs no CPU (a looping
# rping would take the 1-vCPU guest's time from the exporter). Its PID is appended to
# $TESTBED_WORK/NAME.pids; returns once rdma resource shows the QP.
workload_qps() {
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$1" ibv_rc_pingpong -d "$2" -i 1 -p "$3" \
    >"$TESTBED_WORK/$4-$3.log" 2>&1 &
  echo "$!" >>"$TESTBED_WORK/$4.pids"
  _wq_pid=$!
  wait_for 10 _wq_up "$_wq_pid" || fail "$4: no QP of PID $_wq_pid on $2: $(rdma resource show qp) $(cat "$TESTBED_WORK/$4-$3.log")"
}
_wq_up() { echo "$1" >"$TESTBED_WORK/wq.pid" && [ "$(workload_qps_of_pids "" "$TESTBED_WORK/wq.pid")" -ge 1 ]; }
# workload_qps_of_pids IBDEV PIDFILE: the QPs of IBDEV (every device when empty) whose owner is a
# PID in PIDFILE, from rdma resource show (the oracle).
workload_qps_of_pids() {
  rdma resource show qp ${1:+link "$1/1"} | awk -v f="$2" '
    BEGIN { while ((getline p < f) > 0) want[p] = 1 }
    { for (i = 1; i < NF; i++) if ($i == "pid" && ($(i + 1) in want)) n++ }
    END { print n + 0 }'
}
# workload_stop NAME: kills the processes workload_qps started for NAME.
workload_stop() {
  [ -f "$TESTBED_WORK/$1.pids" ] || return 0
  while read -r _p; do kill "$_p" 2>/dev/null; done <"$TESTBED_WORK/$1.pids"
  rm -f "$TESTBED_WORK/$1.pids"
}

# --- scrape checks ------------------------------------------------------------------------------
# assert_no_negative FILE: fails if any sample in the scrape is negative or NaN. Gauges of signed
# physical quantities (a module's temperature and its thresholds, e.g. a -5 °C low alarm) may be
# negative, never NaN.
assert_no_negative() {
  _bad=$(_sample_values "$1" | awk '
    tolower($NF) == "nan" { print; next }
    $NF ~ /^-/ && $1 !~ /^roce_transceiver_(temperature_celsius|threshold)[{ ]/ { print }' | head -n 5)
  [ -z "$_bad" ] || fail "negative or NaN samples in the scrape: $_bad"
}
# _sample_values FILE: "series value" per sample line (timestamps dropped).
_sample_values() {
  awk '/^#/ || NF < 2 { next }
    { c = index($0, "} "); if (c) { split(substr($0, c + 2), r, " "); print substr($0, 1, c), r[1] }
      else print $1, $2 }' "$1"
}
# series_count FILE REGEX: number of sample lines matching the extended REGEX.
series_count() { grep -v '^#' "$1" | grep -cE -- "$2"; }

# rdma_links: "DEV/PORT NETDEV STATE" per RDMA link, from `rdma link show`.
rdma_links() {
  $RDMA link show | awk '{ nd = ""; st = ""
      for (i = 3; i <= NF; i++) { if ($i == "netdev") nd = $(i + 1); if ($i == "state") st = $(i + 1) }
      print $2, nd, st }'
}
# ibdev_of NETDEV: the RDMA device bound to NETDEV (empty when none).
ibdev_of() { rdma_links | awk -v n="$1" '$2 == n { split($1, a, "/"); print a[1]; exit }'; }
# rdma_metric_for COUNTER: the exporter family (and stat= label) of an RDMA hw counter name.
rdma_metric_for() {
  case $1 in
    np_cnp_sent) echo "roce_cnp_sent_total" ;;
    rp_cnp_handled) echo "roce_cnp_handled_total" ;;
    rp_cnp_ignored) echo "roce_cnp_ignored_total" ;;
    np_ecn_marked_roce_packets) echo "roce_ecn_marked_packets_total" ;;
    *) echo "roce_rdma_hw_stat_total stat=$1" ;;
  esac
}

# exported_rdma_counters FILE DEV/PORT: the exporter's RDMA hw counters of one port in a scrape,
# translated back to kernel names (the catalogue's mapping): sorted "name value" lines, directly
# comparable with `rdma_counters DEV/PORT | sort`.
exported_rdma_counters() {
  _metric_lines "$1" | awk -v dev="${2%/*}" -v port="${2#*/}" "$_AWK_LABELS"'
    $1 == "roce_cnp_sent_total" { n = "np_cnp_sent" }
    $1 == "roce_cnp_handled_total" { n = "rp_cnp_handled" }
    $1 == "roce_cnp_ignored_total" { n = "rp_cnp_ignored" }
    $1 == "roce_ecn_marked_packets_total" { n = "np_ecn_marked_roce_packets" }
    $1 == "roce_rdma_hw_stat_total" { n = L["stat"] }
    n != "" && L["device"] == dev && L["port"] == port { print n, $NF }
    { n = "" }' | sort
}

# exported_ethtool_prio_counters FILE NETDEV: the exporter's per-priority / per-TC port counters of
# one netdev, translated back to `ethtool -S` names (durations back to microseconds): sorted
# "name value" lines, comparable with `ethtool_prio_stats NETDEV`.
exported_ethtool_prio_counters() {
  _metric_lines "$1" | awk -v nd="$2" "$_AWK_LABELS"'
    L["netdev"] != nd { next }
    { p = L["prio"]; t = L["tc"]; d = L["direction"]; v = $NF; n = "" }
    $1 == "roce_pfc_pause_frames_total" { n = d "_prio" p "_pause" }
    $1 == "roce_pfc_pause_duration_seconds_total" { n = d "_prio" p "_pause_duration"; v = sprintf("%.0f", v * 1000000) }
    $1 == "roce_pfc_pause_transitions_total" { n = "rx_prio" p "_pause_transition" }
    $1 == "roce_prio_packets_total" { n = d "_prio" p "_packets" }
    $1 == "roce_prio_bytes_total" { n = d "_prio" p "_bytes" }
    $1 == "roce_prio_discards_total" { n = "rx_prio" p "_discards" }
    $1 == "roce_tc_discards_total" { n = "rx_prio" t (L["reason"] == "buffer" ? "_buf_discard" : "_cong_discard") }
    $1 == "roce_tc_ecn_marked_packets_total" { n = "rx_prio" t "_marked" }
    $1 == "roce_pause_storm_events_total" { n = "tx_pause_storm_" L["severity"] "_events" }
    n != "" { print n, v }' | sort
}
# ethtool_prio_stats NETDEV: the per-priority / per-TC and storm lines of `ethtool -S`, sorted.
ethtool_prio_stats() {
  ethtool_stats "$1" | awk '$1 ~ /^(rx|tx)_prio[0-7]_|^tx_pause_storm_/' | sort
}

# _metric_lines FILE: "family label=value ... value" per sample line (quotes removed; label values
# must not contain spaces). Consumers prefix their awk program with "$_AWK_LABELS", which fills
# L[label] for the current line.
_metric_lines() {
  awk '/^#/ || NF < 2 { next }
    { c = index($0, "{")
      if (c && c < index($0, " ")) {
        e = index($0, "} "); name = substr($0, 1, c - 1); labels = substr($0, c + 1, e - c - 1)
        split(substr($0, e + 2), r, " ")
        gsub(/",/, "\" ", labels); gsub(/"/, "", labels)
        print name, labels, r[1]
      } else { split($0, r, " "); print r[1], r[2] } }' "$1"
}
_AWK_LABELS='{ split("", L); for (i = 2; i < NF; i++) { e = index($i, "="); if (e) L[substr($i, 1, e - 1)] = substr($i, e + 1) } }'

# --- lldpd (the LLDP agent the exporter reads; scenarios/lldp-*.sh) --------------------------------
LLDPD_SOCK=$TESTBED_WORK/lldpd.socket
LLDPD_LOG=$TESTBED_WORK/lldpd.log
lldpcli() { /usr/sbin/lldpcli -u "$LLDPD_SOCK" "$@"; }
# start_lldpd [-r] NETDEV...: starts lldpd (foreground, in the background; log $LLDPD_LOG) on the
# given interfaces only, with its control socket at $LLDPD_SOCK, and waits until it manages every
# NETDEV. -r: receive only (it sends no LLDPDU). Sets LLDPD_PID. Skips without lldpd in the image.
start_lldpd() {
  [ -x /usr/sbin/lldpd ] || skip "lldpd is not in the guest (the runner adds it for scripts that call start_lldpd, from the host's lldpd package)"
  _sl_opts=
  [ "$1" = -r ] && _sl_opts=-r && shift
  mkdir -p /run/lldpd # privilege separation chroots there
  # shellcheck disable=SC2086 # _sl_opts is empty or one word
  /usr/sbin/lldpd -d $_sl_opts -u "$LLDPD_SOCK" -I "$(echo "$*" | tr ' ' ',')" >>"$LLDPD_LOG" 2>&1 &
  LLDPD_PID=$!
  for _sl_n in "$@"; do
    wait_for 30 _lldpd_manages "$_sl_n" || {
      tail -n 20 "$LLDPD_LOG" >&2
      fail "lldpd does not manage $_sl_n within 30 s"
    }
  done
}
_lldpd_manages() { kill -0 "$LLDPD_PID" 2>/dev/null && lldpcli show interfaces -f keyvalue 2>/dev/null | grep -q "^lldp\.$1\."; }
# stop_lldpd: SIGTERM and wait (lldpd removes its socket on the way out).
stop_lldpd() {
  [ -n "$LLDPD_PID" ] || return 0
  kill -TERM "$LLDPD_PID" 2>/dev/null
  wait_for 10 _gone "$LLDPD_PID" || fail "lldpd did not exit within 10 s of SIGTERM"
  wait "$LLDPD_PID" 2>/dev/null
  LLDPD_PID=
}
# lldp_neighbor NETDEV KEY: KEY of NETDEV's neighbour in `lldpcli show neighbors details -f
# keyvalue` (chassis.name, chassis.mac, port.ifname, port.descr, port.ttl, port.mfs, ...); status
# 1 without one. The keyvalue format, not JSON: busybox has no JSON parser.
lldp_neighbor() {
  lldpcli show neighbors details -f keyvalue | awk -v k="lldp.$1.$2" '
    index($0, k "=") == 1 { print substr($0, length(k) + 2); f = 1 } END { exit !f }'
}
# lldp_has_neighbor NETDEV [SYSNAME]: NETDEV has a neighbour (named SYSNAME).
lldp_has_neighbor() {
  _lh=$(lldp_neighbor "$1" chassis.name) || return 1
  [ -z "$2" ] || [ "$_lh" = "$2" ]
}
# lldp_no_neighbor NETDEV: lldpd answers and lists no neighbour on NETDEV.
lldp_no_neighbor() {
  _ln=$(lldpcli show neighbors -f keyvalue) || return 1
  ! echo "$_ln" | grep -q "^lldp\.$1\."
}
# lldp_unknown_tlvs NETDEV: the TLVs lldpd kept undecoded ("unknown-tlvs"), one line each:
# "OUI SUBTYPE LEN VALUE" as lldpcli prints them, e.g. "00,80,C2 11 2 08,18".
lldp_unknown_tlvs() {
  lldpcli show neighbors details -f keyvalue | awk -v p="lldp.$1.unknown-tlvs.unknown-tlv" '
    index($0, p ".oui=") == 1 { o = substr($0, length(p) + 6) }
    index($0, p ".subtype=") == 1 { s = substr($0, length(p) + 10) }
    index($0, p ".len=") == 1 { l = substr($0, length(p) + 6) }
    index($0, p "=") == 1 { print o, s, l, substr($0, length(p) + 2) }'
}
# lldp_stat NETDEV COUNTER: lldpd's per-port statistic (tx, rx, rx_discarded_cnt,
# rx_unrecognized_cnt, ageout_cnt, insert_cnt, delete_cnt).
lldp_stat() {
  lldpcli show statistics -f keyvalue | awk -v k="lldp.$1.$2.$2" '
    index($0, k "=") == 1 { print substr($0, length(k) + 2); f = 1 } END { exit !f }'
}

# Helpers shipped with the simnic module (tests/testbed/simnic/guest-lib.sh), if any.
[ -f /testbed/simnic-lib.sh ] && . /testbed/simnic-lib.sh

# The enforce-storm-* scenarios' start: the first simnic port, conformed to the default policy,
# then a tx PFC storm on priority 3 (stall prevention off: it lasts until `storm stop`) and the
# drift enforce would fix (DSCP 26 unmapped, ToS cleared). Sets sim, ibdev, tos_file, policy,
# window_s, window_samples and base (the DCB notification sequence before any exporter write), and
# defines dscp26, tos, uptime_s, since, state_in and link_up.
storm_on_drifted_port() {
  sim=$(simnic_netdevs | sed -n 1p)
  ibdev=$(ibdev_of "$sim")
  [ -n "$ibdev" ] || fail "no RDMA device on $sim"
  tos_file=/sys/class/infiniband/$ibdev/tc/1/traffic_class
  window_s=6
  window_samples=20

  policy=$TESTBED_WORK/policy.yaml
  "$EXPORTER" policy show-default >"$policy" || fail "policy show-default failed"
  simnic_conform_default_policy "$sim" "$ibdev"

  dscp26() { dcb -N app show dev "$sim" | tr ' ' '\n' | sed -n 's/^26://p' | tr '\n' ' ' | sed 's/ $//'; }
  tos() { cat "$tos_file"; }
  uptime_s() { cut -d' ' -f1 /proc/uptime; }
  since() { awk -v t="$1" '{ printf "%.1f", $1 - t }' /proc/uptime; }
  # The remediation state whose series reads 1 (nothing if none does) in a saved scrape.
  state_in() {
    _metric_lines "$1" | awk -v nd="$sim" "$_AWK_LABELS"'
      $1 == "roce_qos_remediation_state" && L["netdev"] == nd && $NF + 0 == 1 { print L["state"] }'
  }

  # The link comes up a moment after simnic's reload: a down link is blocked_down, another reason to
  # write nothing, but this window is about the storm.
  link_up() { [ "$(cat /sys/class/net/"$sim"/operstate)" = up ]; }
  wait_for 10 link_up || fail "$sim: link not up 10 s after the reload"

  # The firmware's stall prevention would end the pausing after 8 s and the detector would see the
  # storm restored on its own: off, the storm lasts until `storm stop`. Set before the storm starts
  # (its watermarks are taken at storm start).
  ethtool --set-tunable "$sim" pfc-prevention-tout 0 || fail "cannot turn PFC stall prevention off"
  simnic_ctl "$sim" "rate * 0; storm start 3 tx"
  assert_eq pausing "$(simnic_storm_phase "$sim" 3 tx)" "storm phase"
  dcb app del dev "$sim" dscp-prio 26:3 || fail "dcb app del 26:3"
  echo -1 >"$tos_file"
  assert_eq "" "$(dscp26)" "DSCP 26 unmapped"
  assert_eq "" "$(tos)" "ToS cleared"
  base=$(simnic_dcb_event_seq "$sim")
  log "storm on $sim prio 3 tx, DSCP 26 unmapped, ToS cleared; DCB notifications so far up to seq $base"
}
