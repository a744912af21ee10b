#!/usr/bin/env bash
# LLDP end to end on the real kernel with the real lldpd (Debian's 1.0.16): a veth whose peer, in
# another network namespace, plays the switch port and sends a leaf switch's LLDPDU (the frame of
# tests/fixtures/lldp/lldpd-1.0.16-custom-tlvs.txt: PFC {3,4}, APP DSCP 26 -> 3, ETS, MFS 9216),
# lldpd receiving it on the exporter's side, and the exporter reading lldpd through liblldpctl:
#  - the neighbour and everything it advertises reach /metrics; `check` prints the cabling line;
#  - MTU 1500 fits the switch's 9216-byte frames (mismatch 0), MTU 9216 does not (mismatch 1);
#    a veth has no DCB, so the check counts a VLAN tag (overhead 22, tagging trust_unknown);
#  - a switch whose system name holds the byte 0xff and whose port description holds a surrogate
#    (bytes that are not UTF-8) still gives a body `promtool check metrics` accepts: each
#    ill-formed sequence is U+FFFD in the label values, and `check --json` is valid UTF-8 JSON;
#  - a neighbour whose TTL ends leaves no stale series: present 0, reason no_frame;
#  - a process outside lldpd's group reads permission_denied; lldpd stopped reads lldpd_not_running.
# Usage: lldp.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
source "$(dirname "$0")/lib/lldp_netns.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
fixture=$(cd "$(dirname "$0")/../fixtures/lldp" && pwd)/lldpd-1.0.16-custom-tlvs.txt
require_tools curl ip lldpd python3 setpriv promtool
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces and lldpd"
getent passwd _lldpd >/dev/null || skip "no _lldpd user: the lldpd package is not installed"

ns=rq-lldp-$$
peer_ns=rq-lldp-sw-$$
work=$(mktemp -d)
chmod 755 "$work"  # lldpd's socket lives here; the uid 65534 run must reach it to be refused
pid=
lldpd_pid=
namespaces=("$ns" "$peer_ns")
cleanup() {
  cleanup_exporter_test  # first: it reads the exit status
  # lldpd's own exit status on SIGTERM is not under test: a bare `wait` under set -e would end the
  # trap with it, failing the test without a word.
  if [[ -n "$lldpd_pid" ]]; then kill "$lldpd_pid" 2>/dev/null && { wait "$lldpd_pid" 2>/dev/null || true; }; fi
  return 0
}
trap cleanup EXIT
lldp_namespaces
lldp_port rql

# lldpd privilege-separates into a chroot its package normally creates at boot.
mkdir -p /run/lldpd
sock=$work/lldpd.socket
start_lldpd() {
  # Not through in_ns: $! must be lldpd itself (ip netns exec execs it), not a subshell.
  ip netns exec "$ns" lldpd -d -r -u "$sock" -I rql0 >"$work/lldpd.log" 2>&1 &
  lldpd_pid=$!
  wait_for 20 "lldpd's socket" test -S "$sock"
}
start_lldpd || { cat "$work/lldpd.log" >&2; fail "lldpd did not start"; finish lldp; }

# send_lldpdu TTL [SYSTEM_NAME_HEX PORT_DESCRIPTION_HEX]: the fixture's LLDPDU with its Time To
# Live TLV set to TTL (and, if given, its System Name and Port Description TLVs holding these
# bytes instead of "leaf01" and "Ethernet12"), sent from the switch side through an AF_PACKET
# socket, as the switch port would.
send_lldpdu() {
  ip netns exec "$peer_ns" python3 - "$fixture" "$@" <<'PY'
import socket, sys
frame = next(l.split(":", 1)[1].strip() for l in open(sys.argv[1]) if l.startswith("# frame:"))
ttl = int(sys.argv[2])
assert frame.count("06020078") == 1  # TTL TLV: type 3, length 2, 120 s
frame = frame.replace("06020078", "0602%04x" % ttl)
def tlv(kind, value):  # type (7 bits) and length (9 bits), then the value
    return "%04x" % (kind << 9 | len(value)) + value.hex()
if len(sys.argv) > 3:
    for kind, old, new in ((5, b"leaf01", sys.argv[3]), (4, b"Ethernet12", sys.argv[4])):
        assert frame.count(tlv(kind, old)) == 1
        frame = frame.replace(tlv(kind, old), tlv(kind, bytes.fromhex(new)))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("rql1", 0))
s.send(bytes.fromhex(frame))
PY
}

url=http://127.0.0.1:9879
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rql0' \
  --sampler.period=100ms --lldp.interval=1s --lldp.socket="$sock" 2>"$work/exporter.log" &
pid=$!  # ip netns exec execs the exporter: this is its pid


wait_for 20 "no neighbour yet" has 'roce_lldp_neighbor_absent_reason{netdev="rql0",reason="no_frame"} 1' &&
  pass "before any frame: present 0, reason no_frame" || fail "no no_frame reason before the first frame"

send_lldpdu 120
info='roce_lldp_neighbor_info{netdev="rql0",chassis_id="0c:29:aa:bb:cc:01",system_name="leaf01",port_id="Ethernet12",port_description="Ethernet12",management_address=""} 1'
if wait_for 20 "the neighbour in /metrics" has "$info"; then
  pass "neighbour leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01) in roce_lldp_neighbor_info"
else
  grep roce_lldp "$work/body" >&2 || true
  fail "the neighbour never reached /metrics"
fi
expect 'roce_lldp_neighbor_present{netdev="rql0"}' 1 "present"
expect 'roce_lldp_neighbor_ttl_seconds{netdev="rql0"}' 120 "TTL"
expect 'roce_lldp_switch_pfc_enabled{netdev="rql0",prio="3"}' 1 "switch PFC on 3"
expect 'roce_lldp_switch_pfc_enabled{netdev="rql0",prio="4"}' 1 "switch PFC on 4"
expect 'roce_lldp_switch_pfc_enabled{netdev="rql0",prio="5"}' 0 "switch PFC off on 5"
expect 'roce_lldp_switch_pfc_capability{netdev="rql0"}' 8 "switch PFC cap"
expect 'roce_lldp_switch_dscp_prio{netdev="rql0",dscp="26"}' 3 "switch DSCP 26 -> 3"
expect 'roce_lldp_switch_prio_tc{netdev="rql0",prio="4"}' 4 "switch priority 4 -> TC 4"
expect 'roce_lldp_switch_ets_bandwidth_ratio{netdev="rql0",tc="0"}' 0.5 "switch TC 0 bandwidth"
expect 'roce_lldp_switch_max_frame_size_bytes{netdev="rql0"}' 9216 "switch max frame size"
expect 'roce_qos_switch_mismatch{netdev="rql0",field="mtu"}' 0 "MTU 1500 (frame 1522) fits 9216"
# A veth has no DCB, so no trust mode says its frames are untagged: the check counts the tag.
expect 'roce_qos_switch_frame_overhead_bytes{netdev="rql0",tagging="trust_unknown"}' 22 \
  "no DCB: the frame-size check counts a VLAN tag (22 bytes, trust_unknown)"
expect_at_least 'roce_lldp_frames_received_total{netdev="rql0"}' 1 "lldpd counted the frames"
# A veth has no DCB: PFC and DSCP cannot be compared, so they have no series (not 0, not 1).
lacks 'roce_qos_switch_mismatch{netdev="rql0",field="pfc"}' &&
  pass "no pfc verdict without a host DCB state" || fail "a pfc verdict on a veth without DCB"

in_ns ip link set rql0 mtu 9216
wait_for 20 "mtu mismatch" has 'roce_qos_switch_mismatch{netdev="rql0",field="mtu"} 1' &&
  pass "MTU 9216 (frame 9238) does not fit 9216: mismatch 1" || fail "no mtu mismatch at MTU 9216"

report=$(in_ns "$exe" check --netdev rql0 --lldp.socket="$sock" 2>&1 || true)
grep -q "switch .*leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)" <<<"$report" &&
  grep -q "switch mtu.*DRIFT" <<<"$report" &&
  grep -q "9216 (tagged frame 9238: trust unknown, no DCB)" <<<"$report" &&
  pass "check: the cabling line and the mtu mismatch with its overhead" || fail "check report: $report"

# A switch that sends bytes that are not UTF-8: "leaf" 0xff "1" as its system name, "Eth", the
# surrogate U+D800 (ED A0 80) and "net1" as the port description. lldpd passes them on as they
# are; the exporter writes U+FFFD for each ill-formed sequence, so Prometheus can parse the body.
send_lldpdu 120 6c656166ff31 457468eda0806e657431  # leaf\xff1, Eth\xed\xa0\x80net1
fffd=$'\xef\xbf\xbd'
odd_info="system_name=\"leaf${fffd}1\",port_id=\"Ethernet12\",port_description=\"Eth${fffd}${fffd}${fffd}net1\""
if wait_for 20 "the 0xff system name in /metrics" has "$odd_info"; then
  pass "system name leaf<0xff>1 and a surrogate in the port description: U+FFFD in the labels"
else
  grep roce_lldp_neighbor_info "$work/body" | od -c | head >&2 || true
  fail "the neighbour's new system name never reached /metrics"
fi
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8", "strict")' "$work/body" &&
  pass "the body is valid UTF-8" || fail "the body is not valid UTF-8"
if promtool check metrics <"$work/body" >"$work/promtool.out" 2>&1 && [[ ! -s "$work/promtool.out" ]]; then
  pass "promtool check metrics accepts the body (exit 0, no warnings)"
else
  fail "promtool check metrics: $(cat "$work/promtool.out")"
fi
in_ns "$exe" check --netdev rql0 --lldp.socket="$sock" --json >"$work/check.json" 2>"$work/check.err" || true
if python3 -c '
import json, sys
report = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
assert "leaf\ufffd1 Ethernet12" in json.dumps(report, ensure_ascii=False), report' "$work/check.json"; then
  pass "check --json: valid UTF-8 JSON naming leaf\ufffd1"
else
  fail "check --json: $(head -c 600 "$work/check.json") $(cat "$work/check.err")"
fi

# TTL expiry: a short-lived announcement, then silence.
send_lldpdu 2
wait_for 20 "TTL 2 in /metrics" has 'roce_lldp_neighbor_ttl_seconds{netdev="rql0"} 2' || true
if wait_for 30 "the neighbour to expire" has 'roce_lldp_neighbor_present{netdev="rql0"} 0'; then
  scrape
  if grep -q 'roce_lldp_neighbor_info\|roce_lldp_switch_\|roce_qos_switch_mismatch' "$work/body"; then
    fail "stale LLDP series after the neighbour expired"
  else
    pass "TTL expired: present 0, no neighbour or switch series left"
  fi
  expect 'roce_lldp_neighbor_absent_reason{netdev="rql0",reason="no_frame"}' 1 "reason after expiry"
else
  fail "the neighbour did not expire"
fi

# Outside lldpd's group: refused, and the reason says so.
denied=$(in_ns setpriv --reuid 65534 --regid 65534 --clear-groups "$exe" check --netdev rql0 \
  --lldp.socket="$sock" 2>&1 || true)
grep -q "group _lldpd" <<<"$denied" && pass "uid 65534 outside _lldpd: check says permission" ||
  fail "no permission reason for uid 65534: $denied"

kill "$lldpd_pid"
wait "$lldpd_pid" 2>/dev/null || true
lldpd_pid=
wait_for 20 "lldpd_not_running" has 'roce_lldp_neighbor_absent_reason{netdev="rql0",reason="lldpd_not_running"} 1' &&
  pass "lldpd stopped: reason lldpd_not_running" || fail "no lldpd_not_running reason"
kill -0 "$pid" && pass "the exporter stays up" || fail "the exporter died"
finish lldp
