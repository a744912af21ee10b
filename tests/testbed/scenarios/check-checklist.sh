# shellcheck shell=sh
# `roce_qos_exporter check` as the validation checklist on the simulated ConnectX:
#  * it selects like the daemon: --collector.device-include picks the simnic netdev by regex,
#    --collector.device-exclude drops it, and an empty selection is exit 2 with the reason;
#  * a repeated --netdev is checked once;
#  * the RDMA port item: ACTIVE with the link up (ok, exit 0), DOWN after `ip link set down`
#    (drift, exit 1, expected ACTIVE / actual DOWN);
#  * --json carries the same verdict and exit code;
#  * link_speed_min_mbps against simnic's 100G: a 100000 minimum passes, 200000 is drift with the
#    speed shown, a down link is drift "no link";
#  * sriov_numvfs: the VF count enabled through simnic's sriov_numvfs passes, another count is
#    drift, and a veth (no PCI function) reports the item unverified, not drift.
require exporter simnic
sim=$(simnic_netdevs | head -n1)
ibdev=$(ibdev_of "$sim")
[ -n "$ibdev" ] || fail "no RDMA device bound to $sim"

# The embedded default policy, as in qos-drift.sh, so only the item under test can differ.
simnic_conform_default_policy "$sim" "$ibdev"
ip link set "$sim" up
port_is() { rdma_links | awk -v n="$sim" -v s="$1" '$2 == n && $3 == s { f = 1 } END { exit !f }'; }
wait_for 10 port_is ACTIVE || fail "$ibdev/1 not ACTIVE with $sim up: $(rdma_links)"

# 1. Selection by regex, like the daemon.
"$EXPORTER" check --collector.device-include="$sim" >check.txt 2>err.txt
assert_eq 0 $? "check --collector.device-include=$sim exit"
assert_eq 1 "$(grep -c ' (pf ' check.txt)" "devices checked by include"
grep -q "^$sim (" check.txt || fail "include did not select $sim: $(cat check.txt)"
assert_match "rdma_port $ibdev/1 ok +ACTIVE" "$(grep "rdma_port $ibdev/1" check.txt)" "port item"

"$EXPORTER" check --collector.device-include="$sim" --collector.device-exclude="$sim" \
  >check.txt 2>err.txt
assert_eq 2 $? "check with everything excluded exit"
grep -q 'no RoCE device selected' err.txt || fail "empty selection not explained: $(cat err.txt)"

"$EXPORTER" check --netdev "$sim" --netdev "$sim" >check.txt 2>err.txt
assert_eq 0 $? "check --netdev twice exit"
grep -q '^1 device: ' check.txt || fail "repeated --netdev counted twice: $(cat check.txt)"

# 2. The RDMA port state follows the link: down is drift.
ip link set "$sim" down
wait_for 10 port_is DOWN || fail "$ibdev/1 not DOWN with $sim down: $(rdma_links)"
"$EXPORTER" check --netdev "$sim" >check.txt 2>err.txt
assert_eq 1 $? "check exit with the RDMA port down"
assert_match "rdma_port $ibdev/1 DRIFT +expected ACTIVE" "$(grep "rdma_port $ibdev/1" check.txt)" \
  "port item when down"
grep -q 'actual   DOWN' check.txt || fail "port state not shown: $(cat check.txt)"

"$EXPORTER" check --netdev "$sim" --json >check.json 2>err.txt
assert_eq 1 $? "check --json exit with the RDMA port down"
grep -q "{\"item\":\"rdma_port $ibdev/1\",\"status\":\"drift\",\"expected\":\"ACTIVE\",\"actual\":\"DOWN\"" \
  check.json || fail "json port item: $(cat check.json)"
grep -q '"exit_code":1}' check.json || fail "json exit_code: $(cat check.json)"

ip link set "$sim" up
wait_for 10 port_is ACTIVE || fail "$ibdev/1 not ACTIVE again: $(rdma_links)"
"$EXPORTER" check --netdev "$sim" >check.txt 2>err.txt
assert_eq 0 $? "check exit with the link back up"

# 3. Link speed against a policy minimum (simnic reports SPEED_100000 while up, unknown when down).
printf 'defaults:\n  link_speed_min_mbps: 100000\n' >speed-100g.yaml
printf 'defaults:\n  link_speed_min_mbps: 200000\n' >speed-200g.yaml
"$EXPORTER" check --config speed-100g.yaml --netdev "$sim" >check.txt 2>err.txt
assert_eq 0 $? "check exit with a 100G link and a 100G minimum"
assert_match "link_speed_min_mbps +ok +100000 Mb/s" "$(grep link_speed_min_mbps check.txt)" \
  "speed item at the minimum"
"$EXPORTER" check --config speed-200g.yaml --netdev "$sim" --json >check.json 2>err.txt
assert_eq 1 $? "check exit with a 100G link and a 200G minimum"
grep -q '{"item":"link_speed_min_mbps","status":"drift","expected":">= 200000 Mb/s","actual":"100000 Mb/s"' \
  check.json || fail "json speed item: $(cat check.json)"
ip link set "$sim" down
"$EXPORTER" check --config speed-100g.yaml --netdev "$sim" >check.txt 2>err.txt
assert_eq 1 $? "check exit with the link down and a speed minimum"
grep -A1 link_speed_min_mbps check.txt | grep -q 'no link' ||
  fail "a down link is not reported as no link: $(cat check.txt)"
ip link set "$sim" up

# 4. SR-IOV VF count through /sys/class/net/<if>/device/sriov_numvfs (simnic's PCI function
#    carries the attribute with the kernel's semantics; tests/testbed/simnic/pci.c).
vfs=/sys/class/net/$sim/device/sriov_numvfs
[ -w "$vfs" ] || fail "simnic has no $vfs"
printf 'defaults:\n  sriov_numvfs: 2\n' >vfs-2.yaml
echo 0 >"$vfs"
echo 2 >"$vfs" || fail "cannot enable 2 VFs on $sim"
"$EXPORTER" check --config vfs-2.yaml --netdev "$sim" >check.txt 2>err.txt
assert_eq 0 $? "check exit with 2 VFs expected and enabled: $(cat check.txt err.txt)"
assert_match "sriov_numvfs +ok +2" "$(grep sriov_numvfs check.txt)" "VF item in sync"
echo 0 >"$vfs"
"$EXPORTER" check --config vfs-2.yaml --netdev "$sim" --json >check.json 2>err.txt
assert_eq 1 $? "check exit with the VFs disabled"
grep -q '{"item":"sriov_numvfs","status":"drift","expected":"2","actual":"0"' check.json ||
  fail "json VF item: $(cat check.json)"
# A netdev without a PCI function (veth) cannot be verified: reported, not drift.
# (The defaults cover Mellanox PFs only; a rule selects the veth.)
printf 'devices:\n  - match: {netdev: rqvf0}\n    policy: {sriov_numvfs: 2}\n' >vfs-veth.yaml
ip link add rqvf0 type veth peer name rqvf1
"$EXPORTER" check --config vfs-veth.yaml --netdev rqvf0 --json >check.json 2>err.txt
grep -q '{"item":"sriov_numvfs","status":"unverified"' check.json ||
  fail "a veth's VF count must be unverified: $(cat check.json)"
ip link del rqvf0
