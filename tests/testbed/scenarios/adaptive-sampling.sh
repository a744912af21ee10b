# shellcheck shell=sh
# Sample fast only where it matters (exporter/sampling/port_scheduler.h): 8 simnic ports whose
# every statistics read (GSTATS, RDMA hw counters) takes 2 ms, the exporter at its default flags.
# The kernel duty cycle it exports (roce_exporter_kernel_duty_cycle_ratio, the last 10 s) stays
# <= 1 % with every port idle and <= 2 % with all 8 carrying RoCE traffic, and an rx PFC storm on
# prio 3 is confirmed (the exporter's "PFC storm" log line) within 2 s of its start on an idle
# port and within 1 s on a busy one, started at a random phase of the port's schedule. Under TCG
# one 2 ms read costs the exporter ~2.5 ms (bench/testbed_read_cost.sh), which the schedule pays
# for with longer periods, so the checks allow TCG margins (below); docs/performance.md reports
# the measured figures against the targets. CHECK=0 only measures (the command is in
# docs/performance.md, "Sampling cost on the node").
# Prints ADAPTIVE_SAMPLING lines (testbed_reset reloads simnic with its defaults afterwards).
require exporter simnic
fw_us=${FW_US:-2000}
storms=${STORMS:-2}
check=${CHECK:-1}

simnic_load_ports 8 fw_stats_latency_us="$fw_us"
for n in $(simnic_netdevs); do simnic_ctl "$n" 'rate * 0'; done
sim=$(simnic_netdevs | head -n1)

# ${EXPORTER_FLAGS}: e.g. --qos.poll-interval=1h to leave the QoS engine's DCB poll (every 5 s,
# ~60 ms of syscalls per poll of 9 netdevs under TCG) out of the duty cycle.
# shellcheck disable=SC2086
start_exporter ${EXPORTER_FLAGS:-}
eight() { scrape "$TESTBED_WORK/m.prom" && [ "$(grep -c "^roce_device_info{.*netdev=\"sim" "$TESTBED_WORK/m.prom")" -ge 8 ]; }
wait_for 20 eight || fail "the exporter does not report 8 simnic ports"

# model: "<modelled firmware calls> <their modelled ns>" of all simnic ports so far (simnic's
# "# fw_model" line): what the reads cost the NIC in model time, not their wall time under TCG.
model() {
  for n in $(simnic_netdevs); do
    sed -n 's/^# fw_model calls=\([0-9]*\) model_ns=\([0-9]*\)$/\1 \2/p' "$SIMNIC_DEBUGFS/$n/ctl"
  done | awk '{ c += $1; t += $2 } END { printf "%.0f %.0f", c, t }'
}
uptime_ns() { awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime; }

# duty STATE LIMIT MODEL_LIMIT: the exported duty cycle after a 10 s window in that state
# (against LIMIT, with TCG margins), and over the same 10 s the model-time duty cycle: simnic's
# modelled firmware time of the 8 ports per second of wall time (against MODEL_LIMIT, the target).
duty() {
  # The ratio covers the last 10 s: a measurement window, not synchronisation; 4 s keep the
  # start (first reads of everything, the QoS engine's first full read) out of it.
  sleep 4
  m0=$(model) t0=$(uptime_ns)
  sleep 10
  m1=$(model) t1=$(uptime_ns)
  d=$(metric roce_exporter_kernel_duty_cycle_ratio) || fail "no roce_exporter_kernel_duty_cycle_ratio"
  md=$(echo "$m0 $m1 $t0 $t1" | awk '{ printf "%.5f", ($4 - $2) / ($6 - $5) }')
  calls=$(echo "$m0 $m1 $t0 $t1" | awk '{ printf "%.2f", ($3 - $1) / 8 / (($6 - $5) / 1e9) }')
  echo "ADAPTIVE_SAMPLING fw_us=$fw_us state=$1 duty_cycle_percent=$(awk -v d="$d" 'BEGIN { printf "%.2f", d * 100 }')" \
    "model_duty_percent=$(awk -v d="$md" 'BEGIN { printf "%.2f", d * 100 }') fw_calls_per_port_s=$calls"
  [ "$check" = 1 ] || return 0
  awk -v d="$d" -v l="$2" 'BEGIN { exit !(d > 0 && d <= l) }' || fail "$1 duty cycle $d above $2"
  awk -v d="$md" -v l="$3" 'BEGIN { exit !(d > 0 && d <= l) }' || fail "$1 model-time duty cycle $md above $3"
}

# storm STATE LIMIT_MS: STORMS storms on $sim prio 3 rx, start -> "PFC storm" within the limit.
storm() {
  pat="msg=\"PFC storm\" netdev=$sim prio=3 direction=rx "
  i=0
  while [ "$i" -lt "$storms" ]; do
    sleep "$((RANDOM % 2)).$((RANDOM % 10))" # a random phase of the port's schedule
    before=$(grep -c "$pat" "$EXPORTER_LOG")
    t0=$(now_s)
    simnic_ctl "$sim" "storm start 3 rx"
    seen() { [ "$(grep -c "$pat" "$EXPORTER_LOG")" -gt "$before" ]; }
    wait_for 15 seen || fail "storm $i ($1) not confirmed within 15 s"
    ms=$(grep "$pat" "$EXPORTER_LOG" | tail -n1 | awk -v a="$t0" '{
      match($0, /T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+Z/)
      split(substr($0, RSTART + 1, RLENGTH - 2), hms, ":")
      d = hms[1] * 3600 + hms[2] * 60 + hms[3] - (a % 86400); if (d < -43200) d += 86400
      printf "%.0f", d * 1000 }')
    echo "ADAPTIVE_SAMPLING fw_us=$fw_us state=$1 storm=$i confirm_ms=$ms"
    [ "$check" = 1 ] && [ "$ms" -gt "$2" ] && fail "storm $i on a $1 port confirmed after $ms ms (> $2 ms)"
    simnic_ctl "$sim" "storm stop 3 rx"
    restored() { scrape "$TESTBED_WORK/s.prom" && [ "$(metric_from "$TESTBED_WORK/s.prom" roce_pfc_storm netdev="$sim" prio=3 direction=rx)" = 0 ]; }
    wait_for 20 restored || fail "storm $i ($1) not restored within 20 s"
    i=$((i + 1))
  done
}

# Targets 1 % and 2 s. The model-time duty cycle is held to the target plus 20 %: under load (CI's
# sanitizer build beside the VM) simnic's sleep compensation (fw.c) ends some modelled reads early,
# the schedule's median read cost then undershoots the model and it reads a little more often
# (1.058 % idle was seen there); bench/testbed_model_cost.sh measures the target on an idle host
# (docs/performance.md). The other checks guard what the schedule does under TCG on a shared host, where
# one 2 ms read costs ~2.5 ms and the QoS engine's 5 s poll (outside the schedule) costs up to
# ~1.4 %: reading every port every 250 ms would be ~8 % (more under load), and a period stops at
# 4 s (16 x --sampler.period) + the 100 ms follow-up. The exported (wall-time) duty cycle grows
# with the host's load, the model-time one does not: 2.25 % idle and 4.51 % busy were seen with
# the sanitizer build beside the VM, hence 4 % and 6 %.
duty idle 0.04 0.012
storm idle 4500
for n in $(simnic_netdevs); do
  simnic_ctl "$n" 'traffic 3 rx 20000; traffic 3 tx 20000; rate rx_prio3_pause 50; rate rx_prio3_pause_duration 2000; rate np_ecn_marked_roce_packets 400; rate np_cnp_sent 300'
done
# Targets 2 % and 1 s; the model-time duty cycle to the target plus 20 % as above, the rest with TCG margins as above (the busy period is ~1.05 s at 2.5 ms per read, and
# up to ~1.9 s while CI's sanitizer build shares the two cores: 2020 ms was seen there).
duty busy 0.06 0.024
storm busy 3000
exporter_alive
