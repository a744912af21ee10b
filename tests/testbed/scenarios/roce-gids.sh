# shellcheck shell=sh
# The RoCE v2 GID check (docs/gids.md) against the GID table the kernel builds for simnic's RDMA
# device (ib_core adds one RoCE v1 and one RoCE v2 GID per address of the netdev and its uppers;
# simnic's add_gid accepts them unless told to refuse, tests/testbed/simnic/rdma.c):
#  1. an IPv4 and an IPv6 address on a simnic port and on a VLAN upper of it: each has a RoCE v2
#     GID on its own netdev in sysfs (gids/N, gid_attrs/types/N, gid_attrs/ndevs/N, the oracle);
#     `check` says `gids ok`, and the exporter's roce_rdma_gids equals the sysfs count of RoCE v2
#     entries and roce_roce_v2_gid_checked_addresses the addresses per family;
#  2. `gid_refuse 198.51.100.77` (simnic's firmware GID table refuses that address, both types):
#     added to the VLAN, the address has no GID in sysfs; `check` exits 1 naming the address and
#     its netdev (no_gid), and roce_roce_v2_gid_missing{reason="no_gid",family="ipv4"} is 1;
#     `gid_refuse v2 <IPv6>` on the other port leaves a v1 GID only: v1_only;
#  3. `gid_refuse off` and the addresses added again: GIDs in sysfs, `check` exits 0, no missing
#     series.
require exporter simnic

# shellcheck disable=SC2046 # netdev names, one word each
set -- $(simnic_netdevs)
[ $# -ge 2 ] || fail "need two simnic ports, got '$*'"
a=$1 b=$2
ia=$(ibdev_of "$a") ib=$(ibdev_of "$b")
{ [ -n "$ia" ] && [ -n "$ib" ]; } || fail "no RDMA device for $a/$b: $(rdma link show)"
vlan=$a.100
# Both ports as the default policy wants them: configured RoCE ports, whose only drift can be GIDs.
simnic_conform_default_policy "$a" "$ia"
simnic_conform_default_policy "$b" "$ib"

# sysfs GID table of IBDEV port 1: "gid type ndev" per populated entry (one grep per directory:
# 255 entries, and the types/ndevs files of an empty entry fail with ENODATA).
gid_table() { # IBDEV
  _d=/sys/class/infiniband/$1/ports/1
  grep -H . "$_d"/gids/* 2>/dev/null | sed 's|^.*/\([0-9][0-9]*:\)|\1|' >"$TESTBED_WORK/gids"
  grep -H . "$_d"/gid_attrs/types/* 2>/dev/null | sed 's|^.*/\([0-9][0-9]*:\)|\1|' >"$TESTBED_WORK/types"
  grep -H . "$_d"/gid_attrs/ndevs/* 2>/dev/null | sed 's|^.*/\([0-9][0-9]*:\)|\1|' >"$TESTBED_WORK/ndevs"
  awk '
    { i = substr($0, 1, index($0, ":") - 1); v = substr($0, index($0, ":") + 1) }
    FILENAME ~ /types$/ { t[i] = v; next }
    FILENAME ~ /ndevs$/ { n[i] = v; next }
    v != "0000:0000:0000:0000:0000:0000:0000:0000" { g[i] = v }
    END { for (i in g) print g[i] " " (i in t ? t[i] : "?") " " (i in n ? n[i] : "?") }
  ' "$TESTBED_WORK/types" "$TESTBED_WORK/ndevs" "$TESTBED_WORK/gids" | sort
}
# The GID ib_core makes of an address, as sysfs prints it (%pI6): ::ffff:a.b.c.d for IPv4.
gid_of() {
  case $1 in
    *.*) echo "$1" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n", $1, $2, $3, $4 }' ;;
    *) echo "$2" ;; # IPv6: the caller gives the expanded form
  esac
}
has_gid() { # IBDEV GID TYPE NETDEV
  gid_table "$1" | grep -qx "$2 $3 $4"
}
no_gid_at_all() { # IBDEV GID
  ! gid_table "$1" | grep -q "^$2 "
}
v2_count() { gid_table "$1" | grep -c ' RoCE v2 '; }

# 1. Addresses on the port and on a VLAN upper (IPv6 without DAD: checked at once).
ip link add link "$a" name "$vlan" type vlan id 100
# No DAD for the VLAN's link-local address either: checked (and counted below) from the start.
echo 0 >"/proc/sys/net/ipv6/conf/$vlan/accept_dad"
ip link set "$vlan" up
ip addr add 192.0.2.10/24 dev "$a"
ip -6 addr add 2001:db8:0:1::10/64 dev "$a" nodad
ip addr add 198.51.100.10/24 dev "$vlan"
ip -6 addr add 2001:db8:0:100::10/64 dev "$vlan" nodad
v6a=2001:0db8:0000:0001:0000:0000:0000:0010
v6v=2001:0db8:0000:0100:0000:0000:0000:0010
for x in "$(gid_of 192.0.2.10) $a" "$v6a $a" "$(gid_of 198.51.100.10) $vlan" "$v6v $vlan"; do
  wait_for 5 has_gid "$ia" "${x% *}" "RoCE v2" "${x#* }" || {
    gid_table "$ia" >&2
    fail "$ia: no RoCE v2 GID ${x% *} on ${x#* } within 5 s"
  }
  has_gid "$ia" "${x% *}" "IB/RoCE v1" "${x#* }" || {
    gid_table "$ia" >&2
    fail "$ia: no RoCE v1 GID ${x% *} on ${x#* }"
  }
done
# ibv_devinfo -v lists the same GIDs when it can open the device (simnic has no uverbs device).
if ibv_devinfo -v -d "$ia" >"$TESTBED_WORK/devinfo" 2>/dev/null; then
  grep -q "ffff:c000:020a\|::ffff:192.0.2.10" "$TESTBED_WORK/devinfo" || fail "ibv_devinfo -v lacks 192.0.2.10's GID"
fi
"$EXPORTER" check --netdev "$a" >check.txt 2>err.txt
rc=$?
[ "$rc" = 0 ] || cat check.txt >&2
assert_eq 0 "$rc" "check with every address's GID"
assert_match "gids +ok" "$(grep ' gids ' check.txt)" "check gids item"

# 2. The firmware refuses the GIDs of a new address (both types), and the v2 GID of another.
simnic_ctl "$a" "gid_refuse 198.51.100.77"
simnic_ctl "$b" "gid_refuse v2 2001:db8:0:2::77"
ip addr add 198.51.100.77/24 dev "$vlan"
ip -6 addr add 2001:db8:0:2::77/64 dev "$b" nodad
g77=$(gid_of 198.51.100.77) v6b=2001:0db8:0000:0002:0000:0000:0000:0077
wait_for 5 has_gid "$ib" "$v6b" "IB/RoCE v1" "$b" || { gid_table "$ib" >&2; fail "$ib: no v1 GID for 2001:db8:0:2::77"; }
has_gid "$ib" "$v6b" "RoCE v2" "$b" && fail "$ib: a RoCE v2 GID for 2001:db8:0:2::77 despite gid_refuse v2"
no_gid_at_all "$ia" "$g77" || { gid_table "$ia" >&2; fail "$ia: a GID for 198.51.100.77 despite gid_refuse"; }
dmesg | grep -q "GID add failed" || log "no 'GID add failed' line in dmesg"

"$EXPORTER" check --netdev "$a" --netdev "$b" >check.txt 2>err.txt
rc=$?
[ "$rc" = 1 ] || cat check.txt >&2
assert_eq 1 "$rc" "check with 198.51.100.77 refused"
assert_match "gids 198.51.100.77 +DRIFT" "$(grep 'gids 198.51.100.77' check.txt)" "check item of the refused address"
grep -A3 'gids 198.51.100.77' check.txt | grep -q "$vlan" || fail "check does not name $vlan for 198.51.100.77"
grep -A3 'gids 198.51.100.77' check.txt | grep -q 'no_gid' || fail "check: 198.51.100.77 not no_gid"
grep -A3 'gids 2001:db8:0:2::77' check.txt | grep -q 'v1_only' || fail "check: 2001:db8:0:2::77 not v1_only"

# The exporter's families against the same table.
gids_now() {
  scrape "$TESTBED_WORK/all.txt"
  grep -E '^roce_(rdma_gids|roce_v2_gid_)' "$TESTBED_WORK/all.txt" >"$TESTBED_WORK/gids.txt" || true
}
missing_is() { # WANT NETDEV FAMILY REASON
  gids_now
  num_eq "$1" "$(metric_from "$TESTBED_WORK/gids.txt" roce_roce_v2_gid_missing "netdev=$2" "family=$3" "reason=$4")"
}
start_exporter --gids.interval=10s "--collector.device-include=^($a|$b)\$"
wait_for 10 missing_is 1 "$a" ipv4 no_gid || { cat "$TESTBED_WORK/gids.txt" >&2; fail "no roce_roce_v2_gid_missing{netdev=$a,ipv4,no_gid} 1 within 10 s"; }
missing_is 1 "$b" ipv6 v1_only || { cat "$TESTBED_WORK/gids.txt" >&2; fail "no roce_roce_v2_gid_missing{netdev=$b,ipv6,v1_only} 1"; }
assert_eq 2 "$(grep -c '^roce_roce_v2_gid_missing{' "$TESTBED_WORK/gids.txt")" "missing series (one per netdev, family, reason)"
assert_num_eq "$(v2_count "$ia")" "$(metric_from "$TESTBED_WORK/gids.txt" roce_rdma_gids "device=$ia")" "$ia roce_rdma_gids = sysfs RoCE v2 entries"
assert_num_eq "$(v2_count "$ib")" "$(metric_from "$TESTBED_WORK/gids.txt" roce_rdma_gids "device=$ib")" "$ib roce_rdma_gids = sysfs RoCE v2 entries"
# Checked addresses of a and its VLAN: the IPv4 pair, and 2 global + 2 link-local IPv6.
n4=$(ip -4 -o addr show dev "$a" | wc -l) n4v=$(ip -4 -o addr show dev "$vlan" | wc -l)
n6=$(ip -6 -o addr show dev "$a" | wc -l) n6v=$(ip -6 -o addr show dev "$vlan" | wc -l)
assert_num_eq $((n4 + n4v)) "$(metric_from "$TESTBED_WORK/gids.txt" roce_roce_v2_gid_checked_addresses "netdev=$a" family=ipv4)" "$a checked IPv4 addresses"
assert_num_eq $((n6 + n6v)) "$(metric_from "$TESTBED_WORK/gids.txt" roce_roce_v2_gid_checked_addresses "netdev=$a" family=ipv6)" "$a checked IPv6 addresses"
grep 'msg="address without a RoCE v2 GID"' "$EXPORTER_LOG" | grep -q 'address=198.51.100.77' ||
  fail "no log line for 198.51.100.77: $(grep -c 'without a RoCE v2 GID' "$EXPORTER_LOG") such lines"

# 3. The refusal ends; the kernel does not retry, the addresses are added again.
simnic_ctl "$a" "gid_refuse off"
simnic_ctl "$b" "gid_refuse off"
ip addr del 198.51.100.77/24 dev "$vlan"
ip addr add 198.51.100.77/24 dev "$vlan"
ip -6 addr del 2001:db8:0:2::77/64 dev "$b"
ip -6 addr add 2001:db8:0:2::77/64 dev "$b" nodad
wait_for 5 has_gid "$ia" "$g77" "RoCE v2" "$vlan" || { gid_table "$ia" >&2; fail "$ia: no RoCE v2 GID for 198.51.100.77 after gid_refuse off"; }
wait_for 5 has_gid "$ib" "$v6b" "RoCE v2" "$b" || { gid_table "$ib" >&2; fail "$ib: no RoCE v2 GID for 2001:db8:0:2::77 after gid_refuse off"; }
"$EXPORTER" check --netdev "$a" --netdev "$b" >check.txt 2>err.txt
rc=$?
assert_eq 0 "$rc" "check after gid_refuse off and the addresses added again ($(grep gids check.txt | tr '\n' ' '))"
no_missing() { gids_now && ! grep -q '^roce_roce_v2_gid_missing{' "$TESTBED_WORK/gids.txt"; }
wait_for 15 no_missing || { cat "$TESTBED_WORK/gids.txt" >&2; fail "roce_roce_v2_gid_missing still served 15 s after the GIDs came back"; }
assert_num_eq "$(v2_count "$ia")" "$(metric_from "$TESTBED_WORK/gids.txt" roce_rdma_gids "device=$ia")" "$ia roce_rdma_gids after recovery"
printf 'gid_refuse v3 all\n' >"$SIMNIC_DEBUGFS/$a/ctl" 2>/dev/null && fail "'gid_refuse v3 all' was accepted"
printf 'gid_refuse 300.1.1.1\n' >"$SIMNIC_DEBUGFS/$a/ctl" 2>/dev/null && fail "'gid_refuse 300.1.1.1' was accepted"
stop_exporter
