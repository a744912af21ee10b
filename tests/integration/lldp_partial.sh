#!/usr/bin/env bash
# LLDP faults that belong to one port stay with that port, on the real kernel with the real lldpd:
# three veths whose peers, in another network namespace, play three switch ports.
#  - rqb0: lldpd cannot answer for the port. A proxy in front of lldpd's control socket answers
#    the exporter's GET_INTERFACE for rqb0 the way lldpd itself answers a request it cannot serve
#    (a NONE message without payload) and passes everything else through. rqb0 reads lldpd_error
#    and roce_lldp_port_errors_total{reason="port_unreadable"} rises; rqa0 and rqc0 keep their
#    neighbours, and `check` names lldpd's error on rqb0 only.
#  - rqa0: the switch's Application Priority TLV holds one entry with a reserved selector beside
#    DSCP 26 -> 3 and UDP 4791 -> 3: the valid entries are kept (the DSCP map is read) and the bad
#    one is counted in roce_lldp_port_errors_total{reason="malformed_app_entry"}.
#  - rqc0: two LLDP agents (two chassis) send on one port: roce_lldp_neighbors is 2, the first is
#    the one shown, and `check` reports the second neighbour as drift.
# Usage: lldp_partial.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
source "$(dirname "$0")/lib/lldp_netns.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
fixture=$(cd "$(dirname "$0")/../fixtures/lldp" && pwd)/lldpd-1.0.16-custom-tlvs.txt
require_tools curl ip lldpd python3
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces and lldpd"
getent passwd _lldpd >/dev/null || skip "no _lldpd user: the lldpd package is not installed"
[[ $(uname -m) == x86_64 ]] || skip "the proxy reads lldpd's message header as laid out on x86_64"

ns=rq-lldpp-$$
peer_ns=rq-lldpp-sw-$$
work=$(mktemp -d)
chmod 755 "$work"  # lldpd's privilege-separated half (_lldpd) must reach its socket here
pid=
lldpd_pid=
proxy_pid=
namespaces=("$ns" "$peer_ns")
cleanup() {
  cleanup_exporter_test  # first: it reads the exit status
  local p
  for p in "$lldpd_pid" "$proxy_pid"; do
    if [[ -n "$p" ]]; then kill "$p" 2>/dev/null && { wait "$p" 2>/dev/null || true; }; fi
  done
  return 0
}
trap cleanup EXIT
lldp_namespaces
for port in rqa rqb rqc; do lldp_port "$port"; done

mkdir -p /run/lldpd  # lldpd's privilege-separation chroot, which its package creates at boot
sock=$work/lldpd.socket
ip netns exec "$ns" lldpd -d -r -u "$sock" -I 'rqa0,rqb0,rqc0' >"$work/lldpd.log" 2>&1 &
lldpd_pid=$!
wait_for 20 "lldpd's socket" test -S "$sock" || { cat "$work/lldpd.log" >&2; die "lldpd did not start"; }

# The proxy: lldpd's control protocol is a header (enum hmsg_type, then size_t len: 16 bytes on
# x86_64) and a payload; GET_INTERFACE (6) carries the interface name as a marshalled string.
proxy_sock=$work/proxy.socket
python3 - "$proxy_sock" "$sock" rqb0 "$work/refused" <<'PY' &
import os, socket, struct, sys, threading
listen_path, lldpd_path, refused_name, refused_log = sys.argv[1:5]
HEADER = struct.Struct("=i4xQ")
GET_INTERFACE, NONE = 6, 0

def exactly(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data

def serve(client):
    lldpd = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lldpd.connect(lldpd_path)
    lock = threading.Lock()
    def answers():
        while data := lldpd.recv(65536):
            with lock:
                client.sendall(data)
    forwarder = threading.Thread(target=answers)
    forwarder.start()
    while (head := exactly(client, HEADER.size)) is not None:
        kind, length = HEADER.unpack(head)
        body = exactly(client, length) if length else b""
        if kind == GET_INTERFACE and refused_name.encode() + b"\0" in body:
            with lock:
                client.sendall(HEADER.pack(NONE, 0))
            with open(refused_log, "a") as log:
                log.write("refused\n")
        else:
            lldpd.sendall(head + body)
    lldpd.shutdown(socket.SHUT_RDWR)  # ends the forwarder's recv
    forwarder.join()
    lldpd.close()
    client.close()

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(listen_path)
server.listen(8)
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
PY
proxy_pid=$!
wait_for 20 "the proxy's socket" test -S "$proxy_sock" || die "the proxy did not start"

# send_lldpdu PORT CHASSIS_MAC SYSTEM_NAME [APP_EXTRA_HEX]: the fixture's LLDPDU (PFC {3,4},
# APP DSCP 26 -> 3 and UDP 4791 -> 3, ETS, MFS 9216) from another chassis and system name, with
# APP_EXTRA_HEX appended to its Application Priority table, sent from the switch side of PORT.
send_lldpdu() {
  ip netns exec "$peer_ns" python3 - "$fixture" "$@" <<'PY'
import socket, sys
frame = next(l.split(":", 1)[1].strip() for l in open(sys.argv[1]) if l.startswith("# frame:"))
port, mac, name = sys.argv[2], sys.argv[3].replace(":", ""), sys.argv[4]
extra = sys.argv[5] if len(sys.argv) > 5 else ""
def tlv(kind, value):  # type (7 bits) and length (9 bits), then the value
    return "%04x" % (kind << 9 | len(value)) + value.hex()
replacements = (
    ("0c29aabbcc01", mac),  # chassis ID (subtype MAC) and the frame's source address
    (tlv(5, b"leaf01"), tlv(5, name.encode())),
    ("fe0b0080c20c0065001a6312b7", tlv(127, bytes.fromhex("0080c20c0065001a6312b7" + extra))),
)
for old, new in replacements:
    assert old in frame, old
    frame = frame.replace(old, new)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((port, 0))
s.send(bytes.fromhex(frame))
PY
}

url=http://127.0.0.1:9879
ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 \
  --collector.device-include='rq[abc]0' --sampler.period=100ms --lldp.interval=1s \
  --lldp.socket="$proxy_sock" 2>"$work/exporter.log" &
pid=$!  # ip netns exec execs the exporter: this is its pid


# lldpd receives on a port once it handles it: no_frame says it does.
for port in rqa0 rqc0; do
  wait_for 20 "lldpd to handle $port" \
    has "roce_lldp_neighbor_absent_reason{netdev=\"$port\",reason=\"no_frame\"} 1" ||
    die "lldpd never handled $port"
done
send_lldpdu rqa1 0c:29:aa:bb:cc:01 leaf01 60001a  # + priority 3, selector 0 (reserved), 26
send_lldpdu rqb1 0c:29:aa:bb:cc:02 leaf02
send_lldpdu rqc1 0c:29:aa:bb:cc:03 leaf03
send_lldpdu rqc1 0c:29:aa:bb:cc:04 hub04

if wait_for 20 "both neighbours on rqc0" has 'roce_lldp_neighbors{netdev="rqc0"} 2'; then
  pass "two agents on rqc0: roce_lldp_neighbors 2"
else
  grep roce_lldp "$work/body" >&2 || true
  lldpcli -u "$sock" show neighbors >&2 || true
  lldpcli -u "$sock" show statistics >&2 || true
  fail "roce_lldp_neighbors on rqc0 never reached 2"
fi
[[ -s "$work/refused" ]] && pass "the proxy refused rqb0's GET_INTERFACE" ||
  fail "the proxy never saw a GET_INTERFACE for rqb0: the fault was not injected"

# rqb0: its fault, and only its.
expect 'roce_lldp_neighbor_absent_reason{netdev="rqb0",reason="lldpd_error"}' 1 "rqb0 unreadable"
expect_at_least 'roce_lldp_port_errors_total{netdev="rqb0",reason="port_unreadable"}' 1 \
  "rqb0: port_unreadable counted"
expect 'roce_lldp_port_errors_total{netdev="rqa0",reason="port_unreadable"}' 0 "rqa0 not charged"
expect 'roce_lldp_port_errors_total{netdev="rqc0",reason="port_unreadable"}' 0 "rqc0 not charged"
expect 'roce_lldp_neighbor_present{netdev="rqa0"}' 1 "rqa0 keeps its neighbour"
expect 'roce_lldp_neighbor_present{netdev="rqc0"}' 1 "rqc0 keeps its neighbour"
grep -q 'roce_lldp_neighbors{netdev="rqb0"}' "$work/body" &&
  fail "rqb0 unreadable yet a neighbour count" || pass "rqb0: no neighbour count (unknown, not 0)"

# rqa0: the reserved-selector entry is skipped, the DSCP map kept.
expect 'roce_lldp_switch_dscp_prio{netdev="rqa0",dscp="26"}' 3 "rqa0: DSCP 26 -> 3 kept"
expect_at_least 'roce_lldp_port_errors_total{netdev="rqa0",reason="malformed_app_entry"}' 1 \
  "rqa0: the reserved-selector entry counted"
expect 'roce_lldp_port_errors_total{netdev="rqc0",reason="malformed_app_entry"}' 0 "rqc0 clean"

# rqc0: the first neighbour is shown, the second is a fault of the cabling.
grep -q 'roce_lldp_neighbor_info{netdev="rqc0",' "$work/body" &&
  [[ $(grep -c 'roce_lldp_neighbor_info{netdev="rqc0",' "$work/body") -eq 1 ]] &&
  pass "rqc0: one neighbour_info series (the alerts' joins stay one-to-one)" ||
  fail "rqc0: $(grep -c 'roce_lldp_neighbor_info{netdev="rqc0",' "$work/body") neighbour_info series"

report=$(in_ns "$exe" check --netdev rqc0 --lldp.socket="$proxy_sock" 2>&1 || true)
grep -q "switch  *DRIFT  *expected one LLDP neighbour" <<<"$report" &&
  grep -q "actual  *2 neighbours; compared: leaf03 Ethernet12" <<<"$report" &&
  pass "check rqc0: two neighbours reported as drift" || fail "check rqc0: $report"
report=$(in_ns "$exe" check --netdev rqb0 --lldp.socket="$proxy_sock" 2>&1 || true)
grep -q "actual  *lldpd socket .*: port rqb0: " <<<"$report" &&
  pass "check rqb0: lldpd's error for the port" ||
  fail "check rqb0: $report"
report=$(in_ns "$exe" check --netdev rqa0 --lldp.socket="$proxy_sock" 2>&1 || true)
grep -q "switch .*leaf01" <<<"$report" && pass "check rqa0: its neighbour, untouched" ||
  fail "check rqa0: $report"
kill -0 "$pid" && pass "the exporter stays up" || fail "the exporter died"
finish lldp_partial
