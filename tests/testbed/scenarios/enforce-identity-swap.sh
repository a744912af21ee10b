# shellcheck shell=sh
# Enforce writes a device only where the write was planned (docs/remediation.md): when two netdevs
# swap names while a write is held, no write planned for one PCI function lands on the other.
#  * simnic, two ports renamed eth-a (PCI function A) and eth-b (function B), each with its own
#    policy by a `pci` rule (docs/policy.md): A maps DSCP 10 -> 3, B maps DSCP 12 -> 3 and enables
#    DCQCN NP on priority 5 as well as 3; neither policy checks the other's extra entries, so one
#    left on the wrong function stays there as the mark of a misdirected write;
#  * both ports drifted at once through the control file (no DCB notification, so the next poll
#    finds both and one remediation pass carries both): their own DSCP entry deleted and NP 3 off;
#    a device's apply is one DCB APP set, then the ecn enable writes;
#  * simnic's write_latency_ms holds every ecn enable write 2 s (without RTNL; shorter than the
#    pass's 3 s apply budget, so the pass goes on to the other device after it): while the first
#    device's NP 3 write is held, the names are swapped (down, rename through a temporary name, up);
#  * DCB sets per function from simnic's dcb_events: a notification names the netdev as it was
#    named then, so each is attributed by its sequence number, before or after the swap;
#  * then, with both functions back in sync: each got exactly one DCB set (the APP entry its own
#    drift needs; a set planned for the other function would be a second), each has its own policy's
#    entries and neither has the other's (DSCP 10 only on A; DSCP 12 and NP 5 only on B).
require exporter simnic
lat=/sys/module/simnic/parameters/write_latency_ms
[ -w "$lat" ] || skip "this simnic has no write_latency_ms parameter"
hold_ms=2000
# shellcheck disable=SC2046 # two names, split on purpose
set -- $(simnic_netdevs | sed -n 1,2p)
[ $# -eq 2 ] || fail "two simnic ports needed"
pci_of() { basename "$(readlink /sys/class/net/"$1"/device)"; }
pci_a=$(pci_of "$1")
pci_b=$(pci_of "$2")
ib_a=$(ibdev_of "$1")
ib_b=$(ibdev_of "$2")
if [ -z "$ib_a" ] || [ -z "$ib_b" ]; then fail "no RDMA device on $1 or $2"; fi
simnic_conform_default_policy "$1" "$ib_a"
simnic_conform_default_policy "$2" "$ib_b"
rename() { ip link set "$1" down && ip link set "$1" name "$2" && ip link set "$2" up; }
rename "$1" eth-a || fail "rename $1 -> eth-a"
rename "$2" eth-b || fail "rename $2 -> eth-b"
link_up() { [ "$(cat /sys/class/net/"$1"/operstate)" = up ]; }
wait_for 10 link_up eth-a || fail "eth-a: link not up"
wait_for 10 link_up eth-b || fail "eth-b: link not up"
# The netdev that is PCI function $1 now.
netdev_of() {
  for _n in eth-a eth-b swap-tmp; do
    [ -e /sys/class/net/$_n ] && [ "$(pci_of $_n)" = "$1" ] && { echo $_n; return 0; }
  done
  return 1
}
dscp_of() { dcb -N app show dev "$1" | tr ' ' '\n' | sed -n "s/^$2://p" | tr '\n' ' ' | sed 's/ $//'; }
np_of() { cat /sys/class/net/"$1"/ecn/roce_np/enable/"$2"; }
dcb app add dev eth-a dscp-prio 10:3 || fail "dcb app add 10:3 on eth-a"
dcb app add dev eth-b dscp-prio 12:3 || fail "dcb app add 12:3 on eth-b"
echo 1 >/sys/class/net/eth-b/ecn/roce_np/enable/5

policy=$TESTBED_WORK/policy.yaml
cat >"$policy" <<EOF
devices:
  - name: function-a
    match: {pci: "$pci_a"}
    policy:
      dscp_prio: {24: 3, 26: 3, 48: 6, 10: 3}
  - name: function-b
    match: {pci: "$pci_b"}
    policy:
      dscp_prio: {24: 3, 26: 3, 48: 6, 12: 3}
      dcqcn: {np: [3, 5], rp: [3]}
EOF
log "eth-a is $pci_a ($ib_a), eth-b is $pci_b ($ib_b)"

uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v t="$1" '{ printf "%.1f", $1 - t }' /proc/uptime; }
latest_seq() {
  _s=0
  for _n in eth-a eth-b; do
    _v=$(simnic_dcb_event_seq "$_n")
    [ "$_v" -gt "$_s" ] && _s=$_v
  done
  echo "$_s"
}
# Both functions drifted through the control file (A: DSCP 10 and NP 3; B: DSCP 12, NP 3 and 5).
drift_both() {
  simnic_ctl "$(netdev_of "$pci_a")" "app del 10 3${1:+; ecn np 3 0}"
  simnic_ctl "$(netdev_of "$pci_b")" "app del 12 3${1:+; ecn np 3 0; ecn np 5 0}"
}
# Each function in its own policy's state (by PCI address, whatever its name now).
own_state() {
  _a=$(netdev_of "$pci_a") && _b=$(netdev_of "$pci_b") || return 1
  [ "$(dscp_of "$_a" 10)" = 3 ] && [ "$(np_of "$_a" 3)" = 1 ] &&
    [ "$(dscp_of "$_b" 12)" = 3 ] && [ "$(np_of "$_b" 3)" = 1 ] && [ "$(np_of "$_b" 5)" = 1 ]
}
both_in_sync() {
  scrape "$TESTBED_WORK/s.txt"
  for _n in eth-a eth-b; do num_eq 1 "$(metric_from "$TESTBED_WORK/s.txt" roce_qos_in_sync netdev="$_n")" || return 1; done
}

echo 0 >"$lat"
start_exporter --collector.device-include='^(eth-a|eth-b)$' --config="$policy" --remediation=enforce \
  --remediation.backoff=1s --qos.poll-interval=500ms --qos.dcqcn-poll-interval=500ms \
  --remediation.state-file="$TESTBED_WORK/remediation.json" \
  --remediation.lock-file="$TESTBED_WORK/enforce.lock"
# Warm-up, writes fast: both functions are written once their storm detector has history.
drift_both
wait_for 60 own_state || fail "warm-up: not fixed within 60 s"
wait_for 20 both_in_sync || fail "warm-up: not both in sync after the fix"

echo "$hold_ms" >"$lat"
base=$(latest_seq)
drift_both np
t_drift=$(uptime_s)
# The first device written: its APP set shows, its NP 3 write is held now.
first=
first_written() {
  for _n in eth-a eth-b; do
    [ "$(simnic_dcb_sets_after "$_n" "$base")" -gt 0 ] && { first=$_n; return 0; }
  done
  return 1
}
wait_for 30 first_written || fail "no DCB write within 30 s of the drift"
first_np3=$(np_of "$first" 3)
swap_lo=$(latest_seq)
$IP -batch - <<EOF || fail "the name swap failed"
link set eth-a down
link set eth-b down
link set eth-a name swap-tmp
link set eth-b name eth-a
link set swap-tmp name eth-b
link set eth-a up
link set eth-b up
EOF
swap_hi=$(latest_seq)
log "first write to $first $(since "$t_drift") s after the drift; names swapped (DCB seq $swap_lo..$swap_hi);" \
  "eth-a is now $(pci_of eth-a), eth-b $(pci_of eth-b)"
# Preconditions: the swap came while the first device's NP 3 write was held, and no DCB write
# fell inside the swap (its netdev could not be attributed).
assert_eq 0 "$first_np3" "NP 3 of $first when the swap began (its held write had landed)"
assert_eq "$swap_lo" "$swap_hi" "DCB notifications during the swap"
echo 0 >"$lat"

wait_for 30 own_state || log "not both in their own policy's state within 30 s of the swap"
wait_for 20 both_in_sync || log "not both in sync within 20 s"
# Every DCB set since the drift, per function: before the swap eth-a was A, after it eth-a is B.
sets_of() {  # pci
  cat "$SIMNIC_DEBUGFS/eth-a/dcb_events" "$SIMNIC_DEBUGFS/eth-b/dcb_events" |
    awk -v b="$base" -v lo="$swap_lo" -v f="$1" -v a="$pci_a" '
      $1 > b + 0 && $2 == "RTM_SETDCB" {
        before = ($1 <= lo + 0)
        pci = (($4 == "eth-a") == before) ? a : "B"
        if ((f == a) == (pci == a)) n++
      } END { print n + 0 }'
}
sets_a=$(sets_of "$pci_a")
sets_b=$(sets_of "$pci_b")
na=$(netdev_of "$pci_a")
nb=$(netdev_of "$pci_b")
echo "ENFORCE_IDENTITY_SWAP first=$first dcb_sets_a=$sets_a dcb_sets_b=$sets_b" \
  "a: dscp10='$(dscp_of "$na" 10)' dscp12='$(dscp_of "$na" 12)' np3=$(np_of "$na" 3) np5=$(np_of "$na" 5)" \
  "b: dscp10='$(dscp_of "$nb" 10)' dscp12='$(dscp_of "$nb" 12)' np3=$(np_of "$nb" 3) np5=$(np_of "$nb" 5)"
bad=
[ "$(dscp_of "$na" 12)" = "" ] || bad="$bad function A has B's DSCP 12 entry;"
[ "$(np_of "$na" 5)" = 0 ] || bad="$bad function A has B's NP 5 enable;"
[ "$(dscp_of "$nb" 10)" = "" ] || bad="$bad function B has A's DSCP 10 entry;"
if [ -n "$bad" ] || [ "$sets_a" != 1 ] || [ "$sets_b" != 1 ]; then
  grep -E 'remediation enforce' "$EXPORTER_LOG" | cut -c1-200 >&2
  cat "$SIMNIC_DEBUGFS/eth-a/dcb_events" "$SIMNIC_DEBUGFS/eth-b/dcb_events" | sort -n | tail -n 8 >&2
fi
[ -z "$bad" ] || fail "writes planned for one function landed on the other:$bad"
assert_eq 1 "$sets_a" "DCB sets to function A ($pci_a) since the drift"
assert_eq 1 "$sets_b" "DCB sets to function B ($pci_b) since the drift"
own_state || fail "a function is not in its own policy's state"
stop_exporter
