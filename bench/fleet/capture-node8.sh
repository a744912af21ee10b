# shellcheck shell=sh
# Guest script (bench/fleet/capture-node8 runs it through tests/testbed/run): the 8-port ConnectX
# node the fleet simulation replays. simnic with 8 ports (8 netdevs, 8 RDMA devices, a QSFP28 on
# even ports and a CMIS module on odd ones), each configured to the embedded default policy (PFC on
# 3, DSCP 24/26 -> 3 and 48 -> 6, DCQCN NP/RP on 3, RoCE ToS 106, tcp_ecn 1) with RoCE traffic,
# pauses, ECN marks and CNPs on priority 3; then `capture` of that node, printed as @@FILE blocks
# (gzip + base64 + sha256) for tests/testbed/lib/extract-files.
require exporter simnic
simnic_load_ports 8
sysctl -qw net.ipv4.tcp_ecn=1
for n in $(simnic_netdevs); do
  dcb app add dev "$n" dscp-prio 24:3 26:3 48:6 || fail "dcb app add $n"
  simnic_ctl "$n" 'ecn np all 0; ecn rp all 0; ecn np 3 1; ecn rp 3 1'
  rdev=$(rdma_links | awk -v n="$n" '$2 == n { split($1, a, "/"); print a[1] }')
  [ -n "$rdev" ] || fail "no RDMA device bound to $n"
  echo 106 >"/sys/class/infiniband/$rdev/tc/1/traffic_class"
  simnic_ctl "$n" 'traffic 3 rx 20000; traffic 3 tx 20000; rate rx_prio3_pause 50; rate tx_prio3_pause 50; rate rx_prio3_pause_duration 2000; rate tx_prio3_pause_duration 2000; rate np_ecn_marked_roce_packets 400; rate np_cnp_sent 300; rate rp_cnp_handled 300'
done
# Only the 8 ConnectX ports: the node the fleet stands for has no Soft-RoCE.
sel='sim[0-9]+'
"$EXPORTER" check --collector.device-include="$sel" >"$TESTBED_WORK/check.txt" 2>&1 ||
  fail "the 8 ports are not in sync with the default policy: $(grep -i drift "$TESTBED_WORK/check.txt" | head -n 5)"
"$EXPORTER" capture --output "$TESTBED_WORK/bundle.txt" --samples 3 --sampler.period=1s \
  --collector.device-include="$sel" --lldp.interval=0 || fail "capture failed"
for secret in 10.0.2.15 192.168.77.1 192.168.77.2; do
  grep -q "$secret" "$TESTBED_WORK/bundle.txt" && fail "the bundle contains $secret"
done
uname -r >"$TESTBED_WORK/kernel.release"
for f in bundle.txt kernel.release; do
  echo "@@FILE $f $(sha256sum <"$TESTBED_WORK/$f" | cut -d' ' -f1)"
  gzip -9c "$TESTBED_WORK/$f" | base64 | sed 's/^/@@DATA /'
  echo "@@END $f"
done
