# shellcheck shell=sh
# The testbed itself: real tools, modules, Soft-RoCE counters that move with traffic and agree
# between netlink and sysfs, a bond over veths. Needs neither the exporter nor simnic.
ip -V | grep -q iproute2 || fail "ip is not iproute2: $(ip -V 2>&1)"
for m in ib_core rdma_rxe bonding veth crc32_generic; do
  [ -d /sys/module/$m ] || fail "module $m not loaded"
done
assert_match 'netdev veth0' "$(rdma link show rxe0/1)" "rxe0 is on veth0"

before=$(rdma_counter rxe0/1 sent_pkts) || fail "rdma statistic has no sent_pkts for rxe0"
rxe_traffic 20
after=$(rdma_counter rxe0/1 sent_pkts)
[ "$after" -gt "$before" ] || fail "rxe0 sent_pkts did not move with traffic ($before -> $after)"
# Idle now: netlink and sysfs must agree on every counter.
rdma_counters rxe0/1 >"$TESTBED_WORK/nl"
n=0
while read -r name value; do
  assert_eq "$value" "$(sysfs_counter rxe0 1 "$name")" "rxe0 $name netlink vs sysfs"
  n=$((n + 1))
done <"$TESTBED_WORK/nl"
[ "$n" -ge 15 ] || fail "rxe0 reports only $n counters"

ip link add tb0 type veth peer name tb1
ip link add bond9 type bond mode active-backup
ip link set tb0 master bond9
assert_eq bond9 "$(basename "$(readlink /sys/class/net/tb0/master)")" "tb0's master"
ip -d link show tb0 | grep -q 'bond_slave' || fail "tb0 is not shown as bond slave"
