# shellcheck shell=sh
# The ibdev<->netdev mapping, port states and roles the exporter reports equal `rdma link show` and
# the bond membership `ip link` shows: simulated ConnectX ports (alone, as bond members, and as
# RoCE LAG), Soft-RoCE rxe0 on veth0; and they follow changes without a restart.
#
# Contract checked: for every RDMA port, roce_device_info has exactly the netdev `rdma link` names;
# a RoCE LAG device (mlx5_bond_*), whose port `rdma link` binds to the active slave, may also be
# reported on the bond (what ibdev2netdev shows); a non-LAG port of a bond member is not.
require exporter simnic

# shellcheck disable=SC2046 # netdev names have no spaces
set -- $(simnic_netdevs)
[ $# -ge 2 ] || fail "simnic created $# netdevs, the scenario needs two"
sim_a=$1
sim_b=$2

expected_master() { ip -o link show dev "$1" | sed -n 's/.* master \([^ ]*\) .*/\1/p'; }
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

# "device port netdev state" lines: the oracle from rdma link (+ the bond of a LAG port) and the
# exporter's roce_device_info.
oracle_links() {
  rdma_links | while read -r devport nd st; do
    st=$(echo "$st" | tr 'A-Z' 'a-z')
    echo "${devport%/*} ${devport#*/} $nd $st"
    case ${devport%/*} in
      mlx5_bond_*) m=$(expected_master "$nd"); [ -z "$m" ] || echo "${devport%/*} ${devport#*/} $m $st" ;;
    esac
  done | sort
}
exporter_links() {
  _metric_lines "$METRICS" | awk "$_AWK_LABELS"'$1 == "roce_device_info" { print L["device"], L["port"], L["netdev"], L["state"] }' | sort
}
links_agree() {
  scrape
  oracle_links >"$TESTBED_WORK/oracle"
  exporter_links >"$TESTBED_WORK/exported"
  cmp -s "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported"
}
# Every netdev in roce_netdev_info has the role and master the kernel shows.
roles_agree() {
  scrape
  _metric_lines "$METRICS" | awk "$_AWK_LABELS"'$1 == "roce_netdev_info" { print L["netdev"], L["role"], "[" L["master"] "]" }' |
    sort >"$TESTBED_WORK/roles.exported"
  [ -s "$TESTBED_WORK/roles.exported" ] || return 1
  while read -r nd _ _; do
    echo "$nd $(expected_role "$nd") [$(expected_master "$nd")]"
  done <"$TESTBED_WORK/roles.exported" >"$TESTBED_WORK/roles.oracle"
  cmp -s "$TESTBED_WORK/roles.oracle" "$TESTBED_WORK/roles.exported"
}
check() {
  wait_for 15 links_agree || {
    diff "$TESTBED_WORK/oracle" "$TESTBED_WORK/exported" >&2
    fail "roce_device_info differs from rdma link show ($1; - expected, + exporter)"
  }
  wait_for 15 roles_agree || {
    diff "$TESTBED_WORK/roles.oracle" "$TESTBED_WORK/roles.exported" >&2
    fail "roce_netdev_info role/master differ from ip link ($1; - kernel, + exporter)"
  }
  exporter_alive
  log "mapping and roles agree ($1): $(tr '\n' ';' <"$TESTBED_WORK/exported")"
}
in_mapping() { grep -q " $1 " "$TESTBED_WORK/exported" || fail "no RDMA port on $1 in roce_device_info ($2)"; }

# --- separate ports, one of them a bond member (no LAG) ------------------------------------------
ip link add bond0 type bond mode active-backup miimon 100 || fail "cannot create bond0"
ip link set "$sim_b" down
ip link set "$sim_b" master bond0 || fail "cannot enslave $sim_b"
ip link set bond0 up
ip link set "$sim_b" up
start_exporter
check "bond0 with $sim_b"
in_mapping veth0 "rxe0"
in_mapping "$sim_a" "standalone port"
assert_eq bond_member "$(metric_label "$METRICS" roce_netdev_info role netdev="$sim_b")" "role of $sim_b"

# Membership changes under the running exporter.
ip link set "$sim_b" nomaster
ip link set "$sim_a" down
ip link set "$sim_a" master bond0 || fail "cannot enslave $sim_a"
ip link set "$sim_a" up
ip link set "$sim_b" up
check "bond0 with $sim_a"
ip link set "$sim_b" down
check "$sim_b down"
stop_exporter
ip link del bond0

# --- RoCE LAG: both ports in one bond, one mlx5_bond_0 device bound to the active slave ---------
rmmod simnic || fail "rmmod simnic"
modprobe simnic $TESTBED_SIMNIC_PARAMS roce_lag=1 || fail "modprobe simnic roce_lag=1"
ip link add bond1 type bond mode active-backup miimon 100 || fail "cannot create bond1"
for d in "$sim_a" "$sim_b"; do ip link set "$d" down; ip link set "$d" master bond1 || fail "enslave $d"; done
ip link set bond1 up
for d in "$sim_a" "$sim_b"; do ip link set "$d" up; done
lag_up() { rdma_links | grep -q '^mlx5_bond_'; }
wait_for 10 lag_up || fail "simnic did not form mlx5_bond_* (rdma link: $(rdma_links | tr '\n' ';'))"
start_exporter
check "RoCE LAG on bond1"
active=$(cat /sys/class/net/bond1/bonding/active_slave)
other=$sim_a
[ "$active" = "$sim_a" ] && other=$sim_b
echo "$other" >/sys/class/net/bond1/bonding/active_slave
lag_moved() { rdma_links | grep '^mlx5_bond_' | grep -q " $other "; }
wait_for 10 lag_moved || fail "rdma link did not follow the active slave to $other"
check "RoCE LAG after failover to $other"
stop_exporter
