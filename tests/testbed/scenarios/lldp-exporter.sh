# shellcheck shell=sh
# LLDP in the exporter (issue 24): the switch as the exporter sees it through the guest's real lldpd,
# with frames crafted through simnic (`rx_frame`) and firmware LLDP (`fw_lldp on`). Needs the
# exporter's LLDP collector (--lldp.interval, --lldp.socket); skips on a build without it.
#  * no frame yet: roce_lldp_neighbor_present 0, reason no_frame;
#  * a frame from leaf1 Ethernet1/1: roce_lldp_neighbor_info with those labels, the switch's PFC,
#    APP, ETS and max frame size gauges, lldpd's frame count;
#  * switch PFC {3,4} against the NIC's {3}: roce_qos_switch_mismatch{field="pfc"} 1, well within
#    the frame's TTL; the switch changes to {3}: 0;
#  * MFS 9216: host MTU 9000 fits (mtu 0), host MTU 9216 does not (mtu 1);
#  * MFS 9018: host MTU 9000 fits untagged (DSCP trust, no VLAN, the port's GIDs on $sim: overhead
#    18, tagging untagged); a VLAN netdev on $sim counts the tag (22, vlan_upper): mtu 1; the VLAN
#    removed: mtu 0;
#  * TTL expiry: present 0 (no_frame) and no neighbour, switch or mismatch series left for the netdev;
#  * fw_lldp on: the frame never reaches lldpd, present stays 0 with reason no_frame;
#  * a selected netdev lldpd does not handle (lldpd -I names only the first port): not_managed;
#    the cable pulled: link_down; lldpd stopped: lldpd_not_running.
require exporter simnic
"$EXPORTER" --help 2>&1 | grep -q -- --lldp.interval ||
  skip "this roce_qos_exporter has no LLDP collector (--lldp.interval)"
sim=$(simnic_netdevs | sed -n 1p)
other=$(simnic_netdevs | sed -n 2p)
[ -n "$other" ] || fail "simnic has one port; this scenario needs two"
ibdev=$(ibdev_of "$sim")
[ -n "$ibdev" ] || fail "no RDMA device bound to $sim"
sw_mac=0c:42:a1:00:00:01
# The NIC: PFC {3}, DSCP 24/26 -> 3, 48 -> 6 (the default policy), MTU 9000.
simnic_conform_default_policy "$sim" "$ibdev"
ip link set dev "$sim" mtu 9000 || fail "mtu 9000"

ets="$(lldp_ets_cfg 0 0 8 0,0,0,3,0,0,0,0 50,0,0,50,0,0,0,0 2,0,0,2,0,0,0,0)"
frame() { # TTL PFC_PRIOS [MFS, 9216]
  lldp_frame "$sw_mac" leaf1 Ethernet1/1 "$1" "$(lldp_port_descr "to-host1-$sim")" \
    "$(lldp_mfs "${3:-9216}")" "$(lldp_pfc 0 0 8 "$2")" "$(lldp_app 3:5:26)" "$ets"
}
inject() { simnic_rx "$sim" "$1" || fail "rx_frame refused: $(sed -n 's/^# last_error //p' "$SIMNIC_DEBUGFS/$sim/ctl")"; }
# is VALUE NAME [label=value...]: one scrape shows the series with VALUE.
is() {
  _is_v=$1
  shift
  _is_got=$(metric "$@") && num_eq "$_is_v" "$_is_got"
}
# expect TIMEOUT VALUE NAME [label=value...]: polls until the series has VALUE.
expect() {
  _ex_t=$1 _ex_v=$2
  shift 2
  wait_for "$_ex_t" is "$_ex_v" "$@" || fail "$* is '$(metric "$@")', expected $_ex_v within ${_ex_t}s"
}
# series_of FILE NAME: how many series of NAME carry netdev=$sim.
series_of() { _series_matching "$1" "$2" netdev="$sim" | wc -l; }
queries() { metric roce_exporter_lldp_queries_total; }

start_lldpd -r "$sim"
start_exporter --collector.device-include="^($sim|$other)\$" --lldp.interval=1s --lldp.socket="$LLDPD_SOCK"
expect 15 1 roce_exporter_lldp_interval_seconds

log "no frame yet: present 0, reason no_frame"
expect 15 0 roce_lldp_neighbor_present netdev="$sim"
expect 5 1 roce_lldp_neighbor_absent_reason netdev="$sim" reason=no_frame
expect 5 0 roce_lldp_neighbor_present netdev="$other"
expect 5 1 roce_lldp_neighbor_absent_reason netdev="$other" reason=not_managed

log "leaf1 Ethernet1/1 advertises PFC {3,4}, DSCP 26 -> 3, MFS 9216"
inject "$(frame 120 3,4)"
expect 15 1 roce_lldp_neighbor_present netdev="$sim"
scrape m.txt
assert_eq 0 "$(series_of m.txt roce_lldp_neighbor_absent_reason)" "no absent reason while present"
assert_num_eq 1 "$(metric_from m.txt roce_lldp_neighbor_info netdev="$sim" system_name=leaf1 port_id=Ethernet1/1 \
  chassis_id="$sw_mac" port_description="to-host1-$sim")" "roce_lldp_neighbor_info labels"
assert_num_eq 120 "$(metric_from m.txt roce_lldp_neighbor_ttl_seconds netdev="$sim")" "TTL"
age=$(metric_from m.txt roce_lldp_neighbor_age_seconds netdev="$sim") || fail "no roce_lldp_neighbor_age_seconds"
awk -v a="$age" 'BEGIN { exit !(a >= 0 && a < 60) }' || fail "neighbour age $age s, expected 0..60 right after the frame"
assert_num_eq "$(lldp_stat "$sim" rx)" "$(metric_from m.txt roce_lldp_frames_received_total netdev="$sim")" "frames received = lldpd's rx count"
for p in 0 1 2 3 4 5 6 7; do
  case $p in 3 | 4) want=1 ;; *) want=0 ;; esac
  assert_num_eq "$want" "$(metric_from m.txt roce_lldp_switch_pfc_enabled netdev="$sim" prio="$p")" "switch PFC prio $p"
done
assert_num_eq 0 "$(metric_from m.txt roce_lldp_switch_pfc_willing netdev="$sim")" "PFC willing"
assert_num_eq 8 "$(metric_from m.txt roce_lldp_switch_pfc_capability netdev="$sim")" "PFC cap"
assert_num_eq 3 "$(metric_from m.txt roce_lldp_switch_dscp_prio netdev="$sim" dscp=26)" "APP DSCP 26"
assert_num_eq 3 "$(metric_from m.txt roce_lldp_switch_prio_tc netdev="$sim" prio=3)" "ETS prio 3 -> TC 3"
assert_num_eq 0.5 "$(metric_from m.txt roce_lldp_switch_ets_bandwidth_ratio netdev="$sim" tc=3)" "ETS TC 3 bandwidth"
assert_num_eq 1 "$(metric_from m.txt roce_lldp_switch_ets_tsa netdev="$sim" tc=3 tsa=ets)" "ETS TC 3 TSA"
assert_num_eq 9216 "$(metric_from m.txt roce_lldp_switch_max_frame_size_bytes netdev="$sim")" "max frame size"

log "switch PFC {3,4} vs NIC {3}: pfc mismatch; DSCP agrees; MTU 9000 fits 9216"
expect 15 1 roce_qos_switch_mismatch netdev="$sim" field=pfc
expect 5 0 roce_qos_switch_mismatch netdev="$sim" field=dscp_prio
expect 5 0 roce_qos_switch_mismatch netdev="$sim" field=mtu

log "the switch moves to PFC {3}: no pfc mismatch"
inject "$(frame 120 3)"
expect 15 0 roce_qos_switch_mismatch netdev="$sim" field=pfc

log "host MTU 9216 + 22 > 9216: mtu mismatch; back to 9000: none"
ip link set dev "$sim" mtu 9216 || fail "mtu 9216"
expect 15 1 roce_qos_switch_mismatch netdev="$sim" field=mtu
ip link set dev "$sim" mtu 9000 || fail "mtu 9000"
expect 15 0 roce_qos_switch_mismatch netdev="$sim" field=mtu

log "MFS 9018: untagged frames (DSCP trust, no VLAN) of MTU 9000 fit; a VLAN on $sim counts the tag"
inject "$(frame 120 3 9018)"
expect 15 9018 roce_lldp_switch_max_frame_size_bytes netdev="$sim"
expect 15 18 roce_qos_switch_frame_overhead_bytes netdev="$sim" tagging=untagged
expect 5 0 roce_qos_switch_mismatch netdev="$sim" field=mtu
ip link add link "$sim" name vl100 type vlan id 100 || fail "a VLAN on $sim"
expect 15 22 roce_qos_switch_frame_overhead_bytes netdev="$sim" tagging=vlan_upper
expect 5 1 roce_qos_switch_mismatch netdev="$sim" field=mtu
ip link del vl100 || fail "delete the VLAN"
expect 15 0 roce_qos_switch_mismatch netdev="$sim" field=mtu
expect 5 18 roce_qos_switch_frame_overhead_bytes netdev="$sim" tagging=untagged
inject "$(frame 120 3)"
expect 15 9216 roce_lldp_switch_max_frame_size_bytes netdev="$sim"

log "TTL 4: the neighbour expires and leaves no stale series"
# Only ~30 s after TTL-120 frames: the neighbour leaving means this frame's TTL 4 ran out. (Its TTL
# gauge is not polled for 4: the window is shorter than a loaded TCG guest can be sure to catch.)
inject "$(frame 4 3)"
expect 20 0 roce_lldp_neighbor_present netdev="$sim"
expect 5 1 roce_lldp_neighbor_absent_reason netdev="$sim" reason=no_frame
scrape m.txt
for f in roce_lldp_neighbor_info roce_lldp_neighbor_age_seconds roce_lldp_neighbor_ttl_seconds \
  roce_lldp_switch_pfc_enabled roce_lldp_switch_pfc_willing roce_lldp_switch_pfc_capability \
  roce_lldp_switch_dscp_prio roce_lldp_switch_prio_tc roce_lldp_switch_ets_bandwidth_ratio \
  roce_lldp_switch_ets_tsa roce_lldp_switch_max_frame_size_bytes roce_qos_switch_mismatch \
  roce_qos_switch_frame_overhead_bytes; do
  assert_eq 0 "$(series_of m.txt "$f")" "$f series of $sim after the neighbour expired"
done

log "fw_lldp on: the frame never reaches lldpd; present stays 0 with reason no_frame"
simnic_ctl "$sim" "fw_lldp on"
inject "$(frame 120 3)"
assert_eq 1 "$(simnic_frames "$sim" fw_lldp_rx)" "simnic swallowed the frame"
q0=$(queries)
rounds_done() { [ "$(queries)" -ge $((q0 + 2)) ]; }
wait_for 15 rounds_done || fail "the exporter made no two LLDP queries in 15 s"
scrape m.txt
assert_num_eq 0 "$(metric_from m.txt roce_lldp_neighbor_present netdev="$sim")" "present with firmware LLDP"
assert_num_eq 1 "$(metric_from m.txt roce_lldp_neighbor_absent_reason netdev="$sim" reason=no_frame)" "reason with firmware LLDP"
assert_eq 0 "$(series_of m.txt roce_lldp_neighbor_info)" "no neighbour info with firmware LLDP"
simnic_ctl "$sim" "fw_lldp off"

log "the cable pulled: reason link_down"
simnic_ctl "$sim" "carrier off"
expect 15 1 roce_lldp_neighbor_absent_reason netdev="$sim" reason=link_down
simnic_ctl "$sim" "carrier on"
expect 15 1 roce_lldp_neighbor_absent_reason netdev="$sim" reason=no_frame

log "lldpd stopped: reason lldpd_not_running"
stop_lldpd
expect 15 1 roce_lldp_neighbor_absent_reason netdev="$sim" reason=lldpd_not_running
is 0 roce_lldp_neighbor_present netdev="$sim" || fail "roce_lldp_neighbor_present is not 0 without lldpd"
exporter_alive
stop_exporter
