# shellcheck shell=sh
# A device that made enforce give up stays given up when its driver is reloaded (docs/remediation.md):
# remediation state is keyed by the device's stable identity (its PCI address), not by the netdev
# that comes and goes, and it is kept in memory and in --remediation.state-file.
#  * an "agent" (a loop on simnic's control file: no DCB notification, like firmware or a DCBX
#    peer) turns PFC 3 off whenever it finds it on; enforce (max 3 attempts, 1 s back-off) restores
#    it three times and gives up;
#  * `rmmod simnic; modprobe simnic`, three times, with the exporter running and the agent still
#    fighting: the returned device gets the rest of the policy through the control file and sysfs
#    and the agent's change (PFC 3 off); its PCI address must be the one it had; the exporter must
#    report gave_up for it and make no DCB write during at least 12 further samples;
#  * then once more with the exporter stopped during the reload: a new process started on the same
#    state file must also report gave_up and not write;
#  * the exporter's DCB writes are counted with simnic's dcb_events (RTM_SETDCB notifications;
#    numbering restarts at each module load). After the baseline only the exporter writes DCB:
#    the scenario and the agent use the control file and sysfs.
require exporter simnic
sim=$(simnic_netdevs | sed -n 1p)
max_attempts=3
# After each return, once gave_up shows: this many more samples without a write. 8 samples are at
# least 2 s (the period only stretches under load), i.e. at least 4 of the 500 ms QoS polls.
after_samples=8

policy=$TESTBED_WORK/policy.yaml
"$EXPORTER" policy show-default >"$policy" || fail "policy show-default failed"
simnic_conform_default_policy "$sim" "$(ibdev_of "$sim")"
pci_of() { basename "$(readlink -f "/sys/class/net/$1/device")"; }
pci=$(pci_of "$sim")
case $pci in *:*:*.*) ;; *) fail "$sim is not a PCI function (device -> '$pci')" ;; esac
log "$sim is PCI function $pci"

pfc3() { dcb pfc show dev "$sim" | sed -n 's/.* 3:\(o[nf]*\) .*/\1/p'; }
state_in() {
  _metric_lines "$1" | awk -v nd="$sim" "$_AWK_LABELS"'
    $1 == "roce_qos_remediation_state" && L["netdev"] == nd && $NF + 0 == 1 { print L["state"] }'
}
state() {
  scrape "$TESTBED_WORK/s.txt"
  state_in "$TESTBED_WORK/s.txt"
}
state_is() { [ "$(state)" = "$1" ]; }
samples() { metric roce_exporter_samples_total; }
# No series of the netdev at all: the exporter has seen it go.
gone() {
  scrape "$TESTBED_WORK/g.txt"
  [ "$(series_count "$TESTBED_WORK/g.txt" "netdev=\"$sim\"")" -eq 0 ]
}
# The returned device: everything the policy wants but PFC, through the control file and sysfs (no
# DCB notification), then the agent's change. simnic loads with PFC off, trust pcp, all ECN on.
reconform() {
  simnic_ctl "$sim" "app add 24 3; app add 26 3; app add 48 6; ecn np all 0; ecn rp all 0; ecn np 3 1; ecn rp 3 1"
  echo 48 >/sys/class/net/"$sim"/ecn/roce_np/cnp_dscp
  echo 6 >/sys/class/net/"$sim"/ecn/roce_np/cnp_802p_prio
  echo 106 >/sys/class/infiniband/"$(ibdev_of "$sim")"/tc/1/traffic_class
  simnic_ctl "$sim" "pfc 0x00"
}

state_file=$TESTBED_WORK/state/remediation.json
mkdir -p "$TESTBED_WORK/state" "$TESTBED_WORK/run"
set -- --collector.device-include="^$sim\$" --config="$policy" --remediation=enforce \
  --remediation.backoff=1s --remediation.max-backoff=1s --remediation.max-attempts=$max_attempts \
  --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms --sampler.discovery-interval=1s \
  --remediation.state-file="$state_file" --remediation.lock-file="$TESTBED_WORK/run/enforce.lock"
start_exporter "$@"
in_sync() { num_eq 1 "$(metric roce_qos_in_sync netdev="$sim")"; }
wait_for 20 in_sync || fail "$sim not in sync at start"
base=$(simnic_dcb_event_seq "$sim")

# The agent: PFC 3 off whenever it is on (its own 0.2 s cadence); survives the module going away.
agent_log=$TESTBED_WORK/agent.log
(
  while :; do
    pf=$(sed -n 's/^# state .* pfc_en=\(0x[0-9a-f]*\) .*/\1/p' "$SIMNIC_DEBUGFS/$sim/ctl" 2>/dev/null)
    if [ -n "$pf" ] && [ $((pf & 8)) -ne 0 ] && echo "pfc 0x00" >"$SIMNIC_DEBUGFS/$sim/ctl" 2>/dev/null; then
      echo "$(cut -d' ' -f1 /proc/uptime) undo" >>"$agent_log"
    fi
    sleep 0.2
  done
) &
agent=$!
simnic_ctl "$sim" "pfc 0x00"

given_up() { num_eq 1 "$(metric roce_qos_remediation_given_up netdev="$sim")"; }
wait_for 60 given_up || fail "no give-up: state $(state), $(simnic_dcb_sets_after "$sim" "$base") DCB writes, $(wc -l <"$agent_log" 2>/dev/null) undos"
wait_for 10 state_is gave_up || fail "given up, but the state is $(state)"
to_give_up=$(simnic_dcb_sets_after "$sim" "$base")
log "gave up after $to_give_up exporter DCB writes ($(wc -l <"$agent_log") undone by the agent)"
assert_eq $max_attempts "$to_give_up" "exporter DCB writes before the give-up (one per attempt)"
# Every write from here on is one too many.
epoch_base=$(simnic_dcb_event_seq "$sim")

extra=0
report=
problems=
# quiet N: N more samples pass; then the state must still be gave_up.
quiet() {
  _s0=$(samples)
  more() { awk -v a="$(samples)" -v b="$_s0" -v n="$1" 'BEGIN { exit !(a - b >= n) }'; }
  wait_for 60 more "$1" || fail "the sampler stalled: fewer than $1 samples in 60 s"
}
# A round's verdict on the writes since the last one; the figures of every round are printed before the scenario fails.
round_done() {
  _w=$(simnic_dcb_sets_after "$sim" "$epoch_base")
  extra=$((extra + _w))
  _st=$(state)
  _p=$(pfc3)
  report="$report $1:writes=$_w,state=${_st:-none},pfc3=$_p"
  [ "$_w" -eq 0 ] || problems="$problems; $1: $_w DCB writes"
  [ "$_st" = gave_up ] || problems="$problems; $1: state ${_st:-none}"
  [ "$_p" = off ] || problems="$problems; $1: PFC 3 is $_p"
  log "$1 (t=$(cut -d' ' -f1 /proc/uptime)): $_w exporter DCB writes, state ${_st:-none}, PFC 3 $_p"
  epoch_base=$(simnic_dcb_event_seq "$sim")
}
# Module out and back (a running exporter must see the netdev go).
reload() {
  rmmod simnic || fail "rmmod simnic ($1)"
  [ -z "$EXPORTER_PID" ] || wait_for 20 gone || fail "the exporter still lists $sim after rmmod ($1)"
  log "$1: $sim gone at t=$(cut -d' ' -f1 /proc/uptime)"
  # shellcheck disable=SC2086 # module parameters, one word each
  modprobe simnic $TESTBED_SIMNIC_PARAMS || fail "modprobe simnic ($1)"
  [ -d "$SIMNIC_DEBUGFS/$sim" ] || fail "no $sim after modprobe ($1): $(simnic_netdevs | tr '\n' ' ')"
  epoch_base=0 # the module's numbering starts again
  reconform
  for d in $(simnic_netdevs); do ip link set "$d" up; done
  _pci=$(pci_of "$sim")
  [ "$_pci" = "$pci" ] || fail "$sim came back as PCI function '$_pci', was $pci: no stable identity"
}

quiet $after_samples
round_done "after the give-up"
for round in 1 2 3; do
  reload "round $round"
  wait_for 30 state_is gave_up || problems="$problems; round $round: never gave_up after the return (state $(state))"
  log "round $round: gave_up shown at t=$(cut -d' ' -f1 /proc/uptime)"
  quiet $after_samples
  round_done "round $round"
done

# The same across a restart: the state file alone carries the give-up.
stop_exporter
reload "restart"
start_exporter "$@"
wait_for 30 state_is gave_up || problems="$problems; restart: never gave_up (state $(state))"
quiet $after_samples
round_done "restart"
kill "$agent"
exporter_alive
stop_exporter
log "state file: $(tr -d '\n' <"$state_file")"
echo "ENFORCE_DRIVER_RELOAD writes_to_give_up=$to_give_up writes_after_give_up=$extra pci=$pci agent_undos=$(wc -l <"$agent_log")"
log "rounds:$report"
[ -z "$problems" ] || fail "after the give-up${problems}"
