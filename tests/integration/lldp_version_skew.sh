#!/usr/bin/env bash
# The exporter (this machine's liblldpctl: Debian 12's 1.0.16) against Debian 11's lldpd 1.0.11,
# run from a Debian 11 root made with mmdebstrap (tests/tools/lldpd-release-root, cached under
# .cache/), in a network namespace whose veth peer plays the switch port and sends the leaf
# switch's LLDPDU of tests/fixtures/lldp/lldpd-1.0.16-custom-tlvs.txt (PFC {3,4}, DSCP 26 -> 3):
#  - lldpd's interface list decodes, its port does not ("data to deserialize is too small (440)
#    for structure lldpd_hardware"): every selected netdev reads reason lldpd_incompatible (not
#    lldpd_error, never an empty view), counted as such, with the structure named in the log;
#    roce_exporter_lldp_library_info names the loaded library; `check` says so;
#  - the same exporter with --lldp.library pointing at Debian 11's own liblldpctl reads the
#    neighbour and its switch PFC and DSCP map.
# docs/lldp.md "lldpd of another version". Usage: lldp_version_skew.sh path/to/roce_qos_exporter
# LLDP_SKEW_SUITE: another Debian suite's lldpd (default bullseye); the assertions are bullseye's.
set -euo pipefail
source "$(dirname "$0")/../common.bash"
source "$(dirname "$0")/lib/lldp_netns.bash"
exe=${1:?usage: $0 path/to/roce_qos_exporter}
fixture=$(cd "$(dirname "$0")/../fixtures/lldp" && pwd)/lldpd-1.0.16-custom-tlvs.txt
require_tools curl ip python3 tar
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces and the chroot"

suite=${LLDP_SKEW_SUITE:-bullseye}
rc=0
tarball=$("$root/tests/tools/lldpd-release-root" "$suite") || rc=$?
((rc == 77)) && skip "no Debian $suite root for lldpd here (see above)"
((rc == 0)) || die "tests/tools/lldpd-release-root $suite failed"

ns=rq-skew-$$
peer_ns=rq-skew-sw-$$
work=$(mktemp -d)
pid=
lldpd_pid=
namespaces=("$ns" "$peer_ns")
cleanup() {
  cleanup_exporter_test  # first: it reads the exit status; it removes $work
  # lldpd's own exit status on SIGTERM is not under test: a bare `wait` under set -e would end the
  # trap with it, failing the test without a word.
  if [[ -n "$lldpd_pid" ]]; then kill "$lldpd_pid" 2>/dev/null && { wait "$lldpd_pid" 2>/dev/null || true; }; fi
  return 0
}
trap cleanup EXIT

r=$work/root
mkdir "$r"
tar --numeric-owner -xf "$tarball" -C "$r"
version=$(chroot "$r" dpkg-query -W -f='${Version}' lldpd)
pass "Debian $suite root from $tarball: lldpd $version"

lldp_namespaces
lldp_port rql

# lldpd of the other release, in its root: ip netns exec gives it a mount namespace with the
# namespace's /sys, bound into the root with a /proc of its own (both gone with it). Its socket,
# in the root, is what the exporter is pointed at.
mkdir -p "$r/run/lldpd" "$r/run/skew"
sock=$r/run/skew/lldpd.socket
ip netns exec "$ns" sh -c 'mount --rbind /sys "$1/sys" && mount -t proc proc "$1/proc" &&
  exec chroot "$1" /usr/sbin/lldpd -d -r -u /run/skew/lldpd.socket -I rql0' sh "$r" \
  >"$work/lldpd.log" 2>&1 &
lldpd_pid=$!  # sh execs chroot, which execs lldpd
wait_for 20 "lldpd's socket" test -S "$sock" || { cat "$work/lldpd.log" >&2; die "lldpd $version did not start"; }

# The fixture's LLDPDU, sent from the switch side as the switch port would.
ip netns exec "$peer_ns" python3 - "$fixture" <<'PY'
import socket, sys
frame = next(l.split(":", 1)[1].strip() for l in open(sys.argv[1]) if l.startswith("# frame:"))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("rql1", 0))
s.send(bytes.fromhex(frame))
PY
# lldpd has the neighbour: its own lldpcli (same release, same library) lists it.
wait_for 20 "lldpd $version to list leaf01" sh -c \
  'chroot "$1" lldpcli -u /run/skew/lldpd.socket show neighbors | grep -q leaf01' sh "$r" &&
  pass "lldpd $version's own lldpcli lists neighbour leaf01 on rql0" ||
  fail "lldpd $version never listed the neighbour: $(chroot "$r" lldpcli -u /run/skew/lldpd.socket show neighbors 2>&1)"

url=http://127.0.0.1:9879
start_exporter() {  # [FLAG...]
  ip netns exec "$ns" "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='rql0' \
    --sampler.period=100ms --lldp.interval=1s --lldp.socket="$sock" "$@" 2>"$work/exporter.log" &
  pid=$!  # ip netns exec execs the exporter: this is its pid
}
stop_exporter() {
  kill "$pid" && wait "$pid" 2>/dev/null || true
  pid=
}

# 1. This machine's liblldpctl against lldpd of the other release.
start_exporter
if wait_for 20 "reason lldpd_incompatible" has 'roce_lldp_neighbor_absent_reason{netdev="rql0",reason="lldpd_incompatible"} 1'; then
  pass "host liblldpctl vs lldpd $version: rql0 reads present 0, reason lldpd_incompatible"
else
  grep roce_lldp_neighbor "$work/body" >&2 || true
  fail "no lldpd_incompatible reason for rql0"
fi
expect 'roce_lldp_neighbor_present{netdev="rql0"}' 0 "no neighbour read"
expect_at_least 'roce_exporter_lldp_query_errors_total{reason="lldpd_incompatible"}' 1 \
  "lldpd_incompatible counted"
expect 'roce_exporter_lldp_query_errors_total{reason="lldpd_error"}' 0 "nothing counted as lldpd_error"
host_library=$(readlink -f "$(ldconfig -p | awk '$1 == "liblldpctl.so.4" {print $NF; exit}')")
expect "roce_exporter_lldp_library_info{file=\"$host_library\"}" 1 "the loaded library named"
grep -q 'msg="lldpd not readable" reason=lldpd_incompatible' "$work/exporter.log" &&
  grep -q 'too small ([0-9]*) for structure lldpd_hardware' "$work/exporter.log" &&
  pass "log: $(grep -o 'port rql0: liblldpctl [^:]*: [^(]*([^)]*)' "$work/exporter.log" | head -1)" ||
  fail "no lldpd_incompatible log line naming lldpd_hardware: $(grep lldp "$work/exporter.log")"
stop_exporter
report=$(in_ns "$exe" check --netdev rql0 --lldp.socket="$sock" 2>&1 || true)
grep -q "actual *lldpd's answer cannot be read by this liblldpctl: lldpd is of another version" <<<"$report" &&
  pass "check: the switch item says lldpd is of another version" || fail "check report: $report"

# 2. lldpd's own library (--lldp.library): the neighbour and what it advertises.
own_library=$r/usr/lib/x86_64-linux-gnu/liblldpctl.so.4
start_exporter --lldp.library="$own_library"
info='roce_lldp_neighbor_info{netdev="rql0",chassis_id="0c:29:aa:bb:cc:01",system_name="leaf01",port_id="Ethernet12",port_description="Ethernet12",management_address=""} 1'
if wait_for 20 "the neighbour through lldpd's own library" has "$info"; then
  pass "--lldp.library=<lldpd $version's liblldpctl>: neighbour leaf01 Ethernet12 read"
else
  grep roce_lldp "$work/body" >&2 || true
  fail "--lldp.library: the neighbour never reached /metrics"
fi
expect "roce_exporter_lldp_library_info{file=\"$(readlink -f "$own_library")\"}" 1 "the library given named"
expect 'roce_lldp_switch_max_frame_size_bytes{netdev="rql0"}' 9216 "switch max frame size (802.3, lldpd decodes it)"
# lldpd before 1.0.15 drops the 802.1 TLVs it does not decode (lldpd commit 09b95cb6, "accept
# unknown TLVs on known orgs", first in 1.0.15) instead of keeping them as custom TLVs: 1.0.11
# hands over no PFC, ETS or APP, whatever the library. No switch PFC/DSCP series, and `check`
# says the TLV is missing rather than inventing a verdict.
if grep -q 'roce_lldp_switch_pfc_enabled\|roce_lldp_switch_dscp_prio\|roce_qos_switch_mismatch{netdev="rql0",field="pfc"}' "$work/body"; then
  fail "lldpd $version handed over 802.1Qaz TLVs: docs/lldp.md \"lldpd of another version\" says it cannot"
else
  pass "lldpd $version keeps no 802.1Qaz TLV: no switch PFC or DSCP series, no pfc verdict"
fi
stop_exporter
report=$(in_ns "$exe" check --netdev rql0 --lldp.socket="$sock" --lldp.library="$own_library" 2>&1 || true)
grep -q "switch .*leaf01 Ethernet12" <<<"$report" && grep -q "switch pfc *UNVERIFIED" <<<"$report" &&
  pass "check --lldp.library: the cabling line, switch pfc unverified" || fail "check --lldp.library: $report"
start_exporter --lldp.library="$own_library"
wait_for 20 "the neighbour again" has "$info" || fail "the neighbour did not come back"
expect 'roce_exporter_lldp_query_errors_total{reason="lldpd_incompatible"}' 0 "no incompatible answer"
kill -0 "$pid" && pass "the exporter stays up" || fail "the exporter died"
finish lldp_version_skew
