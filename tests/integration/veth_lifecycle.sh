#!/usr/bin/env bash
# The exporter on the real kernel, in a private network namespace: a veth selected by regex is
# sampled and what it reports equals `ethtool -S` (after traffic has stopped: no racing); when the
# veth is deleted its series disappear and the exporter stays up; re-created, it is rediscovered.
# Usage: veth_lifecycle.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
require_tools curl ip ethtool
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"

# The exporter and rqv0 live in $ns; the peer rqv1 in $peer_ns, so traffic really crosses the veth.
ns=rq-veth-$$
peer_ns=rq-peer-$$
work=$(mktemp -d)
pid=
namespaces=("$ns" "$peer_ns")
trap cleanup_exporter_test EXIT
ip netns add "$ns" || skip "cannot create a network namespace here"
ip netns add "$peer_ns"
in_ns() { ip netns exec "$ns" "$@"; }
in_peer() { ip netns exec "$peer_ns" "$@"; }

# make_veth: rqv0 (10.99.0.1) in $ns <-> rqv1 (10.99.0.2) in $peer_ns. IPv6 off and static
# neighbours: no DAD, router solicitation or ARP moves a counter on its own. GRO on and TSO off
# route veth receive through NAPI, whose rx_queue_0_xdp_* counters count every frame.
make_veth() {
  in_ns ip link add rqv0 type veth peer name rqv1 netns "$peer_ns"
  in_ns sysctl -qw net.ipv6.conf.rqv0.disable_ipv6=1
  in_peer sysctl -qw net.ipv6.conf.rqv1.disable_ipv6=1
  in_ns ethtool -K rqv0 gro on tso off >/dev/null
  in_peer ethtool -K rqv1 gro on tso off >/dev/null
  in_ns ip addr add 10.99.0.1/24 dev rqv0
  in_peer ip addr add 10.99.0.2/24 dev rqv1
  in_ns ip neigh replace 10.99.0.2 lladdr "$(in_peer cat /sys/class/net/rqv1/address)" dev rqv0 nud permanent
  in_peer ip neigh replace 10.99.0.1 lladdr "$(in_ns cat /sys/class/net/rqv0/address)" dev rqv1 nud permanent
  in_ns ip link set rqv0 up
  in_peer ip link set rqv1 up
}
in_ns ip link set lo up
make_veth

url=http://127.0.0.1:9879
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rqv.*' \
  --collector.ethtool.raw-include='.*' --sampler.period=100ms --sampler.discovery-interval=1s \
  2>"$work/exporter.log" &
pid=$!  # ip netns exec execs the exporter: this is its pid

scrape() { in_ns curl -sf "$url/metrics" -o "$work/body"; }
has() { scrape && grep -qF "$1" "$work/body"; }
lacks() { scrape && ! grep -qF "$1" "$work/body"; }
samples() { scrape && metric_value "$work/body" roce_exporter_samples_total; }
alive() { kill -0 "$pid" 2>/dev/null && in_ns curl -sf -o /dev/null "$url/-/healthy"; }

wait_for 20 "rqv0 series" has 'roce_netdev_info{netdev="rqv0",driver="veth"' &&
  pass "rqv0 selected by --collector.device-include and described" ||
  { cat "$work/exporter.log" >&2; fail "rqv0 never appeared"; finish veth_lifecycle; }

# Traffic, then stillness: both links must be operationally up or the noop qdisc drops frames.
link_up() { in_ns ip -o link show rqv0 | grep -q 'state UP' && in_peer ip -o link show rqv1 | grep -q 'state UP'; }
wait_for 10 "rqv0/rqv1 operstate UP" link_up
# 20 UDP datagrams from the peer side (bash's /dev/udp): rqv0 receives exactly these 20 frames.
in_peer bash -c 'for i in $(seq 20); do echo roceqos >/dev/udp/10.99.0.1/9; done' &&
  pass "20 datagrams sent across the veth" || fail "sending datagrams failed"
stats() { in_ns ethtool -S rqv0 | awk -F': *' 'NR > 1 { gsub(/^ +/, "", $1); print $1, $2 }'; }
still() {
  stats >"$work/ethtool.a"
  sleep 0.2
  stats >"$work/ethtool.b"
  cmp -s "$work/ethtool.a" "$work/ethtool.b"
}
wait_for 10 "rqv0 counters to stop moving" still

# Only a sample taken after the counters stopped may be compared: wait for two more samples.
start=$(samples)
newer() { local n; n=$(samples) && [[ -n "$n" ]] && ((n >= start + 2)); }
wait_for 10 "two samples after the traffic" newer
scrape
compared=0
while read -r name value; do
  got=$(metric_value "$work/body" "roce_ethtool_stat{netdev=\"rqv0\",stat=\"$name\"}")
  if [[ "$got" == "$value" ]]; then
    compared=$((compared + 1))
  else
    fail "rqv0 $name: exporter '$got', ethtool -S '$value'"
  fi
done <"$work/ethtool.b"
((compared > 0)) && pass "all $compared rqv0 stats equal ethtool -S" || fail "nothing compared"
rx=$(awk '$1 == "rx_queue_0_xdp_packets" { print $2 }' "$work/ethtool.b")
[[ -n "$rx" ]] && ((rx >= 20)) && pass "the 20 datagrams show: rx_queue_0_xdp_packets=$rx" ||
  fail "rx_queue_0_xdp_packets='$rx' does not show the 20 datagrams"

# Delete the veth while the exporter runs: its series go, the exporter stays.
in_ns ip link del rqv0
wait_for 10 "rqv0 series to disappear" lacks 'netdev="rqv0"' &&
  pass "rqv0 series disappeared after deletion" || fail "stale rqv0 series remain"
alive && pass "exporter still up and healthy" || fail "exporter died after the deletion"
grep -qE '^roce_exporter_samples_total [0-9]' "$work/body" && pass "still sampling"

# Re-create it: rediscovered at the next discovery.
make_veth
wait_for 15 "rqv0 rediscovered" has 'roce_ethtool_stat{netdev="rqv0",stat="peer_ifindex"}' &&
  pass "re-created rqv0 rediscovered" || fail "re-created rqv0 not rediscovered"
peer_ifindex=$(in_ns ethtool -S rqv0 | awk '/peer_ifindex/ { print $2 }')
scrape
[[ "$(metric_value "$work/body" 'roce_ethtool_stat{netdev="rqv0",stat="peer_ifindex"}')" == "$peer_ifindex" ]] &&
  pass "re-created rqv0 reports its new peer_ifindex $peer_ifindex" ||
  fail "re-created rqv0 peer_ifindex differs from ethtool -S ($peer_ifindex)"

grep -q 'level=error' "$work/exporter.log" && fail "errors logged:"$'\n'"$(grep level=error "$work/exporter.log")" ||
  pass "no error logged"
finish veth_lifecycle
