# The ibdev<->netdev mapping, port states and roles the exporter reports equal `rdma link show` and
# the bond membership `ip link` shows, for the simulated ConnectX ports, Soft-RoCE (rxe0 on veth0)
# and bond members, and follow a membership change without a restart.
require exporter simnic

set -- $(simnic_netdevs)
[ $# -ge 2 ] || fail "simnic created $# netdevs, the scenario needs two"
sim_a=$1
sim_b=$2
ip link add bond0 type bond mode active-backup miimon 100 || fail "cannot create bond0"
ip link set "$sim_b" down
ip link set "$sim_b" master bond0 || fail "cannot enslave $sim_b"
ip link set bond0 up
ip link set "$sim_b" up

start_exporter

# Expected role of a netdev, from the kernel's own view (ip -d link, sysfs).
expected_role() {
  _d=$(ip -d link show dev "$1")
  if echo "$_d" | grep -q ' bond_slave '; then echo bond_member
  elif echo "$_d" | grep -qE '^ +bond mode'; then echo bond
  elif [ -e "/sys/class/net/$1/device/physfn" ]; then echo vf
  elif [ "$(basename "$(readlink "/sys/class/net/$1/device/subsystem" 2>/dev/null)")" = pci ]; then echo pf
  else echo other
  fi
}
expected_master() { ip -o link show dev "$1" | sed -n 's/.* master \([^ ]*\) .*/\1/p'; }

# Oracle: "device port netdev state" per RDMA link; exporter: the same from roce_device_info.
oracle_links() {
  rdma_links | while read -r devport nd st; do
    echo "${devport%/*} ${devport#*/} $nd $(echo "$st" | tr 'A-Z' 'a-z')"
  done | sort
}
exporter_links() {
  scrape
  metric_series "$METRICS" roce_device_info | tr ',' ' ' | awk '{
      for (i = 1; i < NF; i++) { split($i, kv, "="); l[kv[1]] = kv[2] }
      print l["device"], l["port"], l["netdev"], l["state"] }' | sort
}
links_agree() {
  oracle_links >"$TESTBED_WORK/oracle"
  exporter_links >"$TESTBED_WORK/exported"
  cmp -s "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported"
}
check_links() {
  wait_for 10 links_agree || {
    log "rdma link show:"; cat "$TESTBED_WORK/oracle" >&2
    log "roce_device_info:"; cat "$TESTBED_WORK/exported" >&2
    fail "the exporter's RDMA port mapping differs from rdma link show ($1)"
  }
  grep -q " veth0 " "$TESTBED_WORK/exported" || fail "rxe0 on veth0 missing ($1)"
  grep -q " $sim_a " "$TESTBED_WORK/exported" || fail "simnic $sim_a missing ($1)"
}
# Every netdev the exporter reports has the role and master the kernel shows.
roles_agree() {
  scrape
  metric_series "$METRICS" roce_netdev_info | tr ',' ' ' >"$TESTBED_WORK/netdevs"
  [ -s "$TESTBED_WORK/netdevs" ] || return 1
  while read -r line; do
    nd=$(_field netdev "$line")
    role=$(_field role "$line")
    master=$(_field master "$line")
    [ "$role" = "$(expected_role "$nd")" ] || { echo "$nd: role $role, kernel says $(expected_role "$nd")"; return 1; }
    [ "$master" = "$(expected_master "$nd")" ] || { echo "$nd: master '$master', kernel says '$(expected_master "$nd")'"; return 1; }
  done <"$TESTBED_WORK/netdevs" >"$TESTBED_WORK/roles.diff"
}
check_roles() {
  wait_for 10 roles_agree || {
    cat "$TESTBED_WORK/roles.diff" "$TESTBED_WORK/netdevs" >&2
    fail "roles/masters differ from ip link ($1)"
  }
}

_field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

check_links "bond0 with $sim_b"
check_roles "bond0 with $sim_b"
assert_eq bond_member "$(metric_label "$METRICS" roce_netdev_info role netdev="$sim_b")" "role of $sim_b"
assert_eq bond0 "$(metric_label "$METRICS" roce_netdev_info master netdev="$sim_b")" "master of $sim_b"

# Membership changes under the running exporter: release sim_b, enslave sim_a.
ip link set "$sim_b" nomaster
ip link set "$sim_a" down
ip link set "$sim_a" master bond0 || fail "cannot enslave $sim_a"
ip link set "$sim_a" up
ip link set "$sim_b" up
check_links "bond0 with $sim_a"
check_roles "bond0 with $sim_a"

# A port going down shows in the exporter's state like in rdma link.
ip link set "$sim_b" down
check_links "$sim_b down"
exporter_alive
stop_exporter
