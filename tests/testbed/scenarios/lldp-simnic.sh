# shellcheck shell=sh
# LLDP without a switch, without the exporter: the real lldpd in the guest hears frames simnic
# receives (control file `rx_frame`) exactly as from a switch port, and firmware LLDP (`fw_lldp on`)
# hides them as ConnectX firmware running LLDP/DCBX does. lldpcli is the oracle:
#  * a crafted frame (leaf1, Ethernet1/1, MFS 9216, PFC {3,4}, APP DSCP 26 -> 3, ETS) arrives:
#    the netdev's rx counter rises by one, lldpd lists the neighbour with those values and keeps the
#    IEEE 802.1Qaz TLVs as unknown TLVs, byte for byte;
#  * a changed frame (PFC {3}) replaces the neighbour's TLVs;
#  * TTL 4 -> lldpd ages the neighbour out within a few seconds;
#  * fw_lldp on: the frame is swallowed (fw_lldp_rx +1, rx counter and lldpd unchanged), other
#    ethertypes still pass, and lldpd's own LLDPDUs never reach the wire (fw_lldp_tx).
require simnic
n=$(simnic_netdevs | head -n1)
sw_mac=0c:42:a1:00:00:01
echo 1 >"/proc/sys/net/ipv6/conf/$n/disable_ipv6" # no autoconf frames in the tx counter below
rx_packets() { cat "/sys/class/net/$n/statistics/rx_packets"; }
tx_packets() { cat "/sys/class/net/$n/statistics/tx_packets"; }

# The switch's ETS: priority 3 -> TC 3 with 50 %, the rest in TC 0 with 50 %, both ETS.
ets="$(lldp_ets_cfg 0 0 8 0,0,0,3,0,0,0,0 50,0,0,50,0,0,0,0 2,0,0,2,0,0,0,0)"
frame() { # TTL PFC_PRIOS [SYSNAME]
  lldp_frame "$sw_mac" "${3:-leaf1}" Ethernet1/1 "$1" "$(lldp_port_descr "host1 $n")" \
    "$(lldp_mfs 9216)" "$(lldp_pfc 0 0 8 "$2")" "$(lldp_app 3:5:26)" "$ets"
}

start_lldpd -r "$n"

log "a crafted LLDP frame reaches lldpd"
rx0=$(rx_packets)
simnic_rx "$n" "$(frame 120 3,4)" || fail "rx_frame refused: $(sed -n 's/^# last_error //p' "$SIMNIC_DEBUGFS/$n/ctl")"
wait_for 20 lldp_has_neighbor "$n" leaf1 || fail "lldpd shows no neighbour leaf1 on $n within 20 s"
assert_eq $((rx0 + 1)) "$(rx_packets)" "rx_packets of $n after one frame"
assert_eq 1 "$(simnic_frames "$n" rx_frames)" "simnic rx_frames"
assert_eq 1 "$(lldp_stat "$n" rx)" "lldpd rx count"
assert_eq "$sw_mac" "$(lldp_neighbor "$n" chassis.mac)" "chassis ID (MAC)"
assert_eq Ethernet1/1 "$(lldp_neighbor "$n" port.ifname)" "port ID (ifname)"
assert_eq "host1 $n" "$(lldp_neighbor "$n" port.descr)" "port description"
assert_eq 120 "$(lldp_neighbor "$n" port.ttl)" "TTL"
assert_eq 9216 "$(lldp_neighbor "$n" port.mfs)" "802.3 max frame size (decoded by lldpd)"
# PFC: willing 0, MBC 0, cap 8 -> 0x08; enable {3,4} -> 0x18. APP: reserved, prio 3 << 5 | sel 5
# = 0x65, DSCP 26 = 0x001a. ETS: 0x00, prio->TC nibbles 00 03 00 00, bandwidth, TSA.
tlvs=$(lldp_unknown_tlvs "$n")
log "unknown TLVs: $(echo "$tlvs" | tr '\n' ';')"
assert_eq "00,80,C2 11 2 08,18
00,80,C2 12 4 00,65,00,1A
00,80,C2 9 21 00,00,03,00,00,32,00,00,32,00,00,00,00,02,00,00,02,00,00,00,00" "$tlvs" "802.1Qaz TLVs as lldpcli lists them"

log "a changed frame replaces the neighbour's TLVs"
simnic_rx "$n" "$(frame 120 3)" || fail "rx_frame refused"
pfc_tlv() { lldp_unknown_tlvs "$n" | awk '$2 == 11 { print $4 }'; }
pfc_is() { [ "$(pfc_tlv)" = "$1" ]; }
wait_for 20 pfc_is 08,08 || fail "PFC TLV still '$(pfc_tlv)', expected 08,08 (PFC {3})"
assert_eq 2 "$(lldp_stat "$n" rx)" "lldpd rx count after the second frame"

log "TTL 4: lldpd ages the neighbour out"
simnic_rx "$n" "$(frame 4 3)" || fail "rx_frame refused"
wait_for 20 lldp_no_neighbor "$n" || fail "the neighbour with TTL 4 is still listed after 20 s"
# aged out (TTL), not deleted: ageout_cnt counts exactly that
assert_eq 1 "$(lldp_stat "$n" ageout_cnt)" "lldpd ageout count"
assert_eq 3 "$(lldp_stat "$n" rx)" "lldpd rx count after the TTL-4 frame"

log "fw_lldp on: firmware swallows LLDP frames, other ethertypes pass"
simnic_ctl "$n" "fw_lldp on"
assert_eq on "$(simnic_frames "$n" fw_lldp)" "fw_lldp state"
rx0=$(rx_packets)
simnic_rx "$n" "$(frame 120 3,4)" || fail "rx_frame refused with fw_lldp on"
assert_eq 1 "$(simnic_frames "$n" fw_lldp_rx)" "fw_lldp_rx after one swallowed frame"
assert_eq "$rx0" "$(rx_packets)" "rx_packets unchanged by a swallowed frame"
# a frame of the local experimental ethertype 0x88b5 is not LLDP: the host gets it
simnic_rx "$n" "ffffffffffff$(echo "$sw_mac" | tr -d :)88b5$(printf '%092d' 0)" || fail "rx_frame refused"
assert_eq $((rx0 + 1)) "$(rx_packets)" "a non-LLDP frame passes with fw_lldp on"
# Ordering proves the swallowed frame never reached lldpd: with firmware LLDP off again, one more
# frame (leaf2) is lldpd's third, not its fourth.
simnic_ctl "$n" "fw_lldp off"
simnic_rx "$n" "$(frame 120 3,4 leaf2)" || fail "rx_frame refused"
wait_for 20 lldp_has_neighbor "$n" leaf2 || fail "no neighbour leaf2 after fw_lldp off"
assert_eq 4 "$(lldp_stat "$n" rx)" "lldpd heard 3 frames before leaf2 and leaf2 itself, not the swallowed one"
assert_eq 1 "$(simnic_frames "$n" fw_lldp_rx)" "fw_lldp_rx unchanged with fw_lldp off"
stop_lldpd

log "fw_lldp on: the host's LLDPDUs never reach the wire"
simnic_ctl "$n" "fw_lldp on"
tx0=$(tx_packets)
start_lldpd "$n" # transmitting: lldpd sends an LLDPDU when it starts on a port
sent() { [ "$(lldp_stat "$n" tx)" -ge 1 ] && [ "$(simnic_frames "$n" fw_lldp_tx)" -ge 1 ]; }
wait_for 20 sent || fail "lldpd tx $(lldp_stat "$n" tx), simnic fw_lldp_tx $(simnic_frames "$n" fw_lldp_tx)"
assert_eq "$(lldp_stat "$n" tx)" "$(simnic_frames "$n" fw_lldp_tx)" "every LLDPDU lldpd sent was dropped"
assert_eq "$tx0" "$(tx_packets)" "tx_packets unchanged"
simnic_ctl "$n" "fw_lldp off"
lldpcli update >/dev/null || fail "lldpcli update"
tx_rose() { [ "$(tx_packets)" -gt "$tx0" ]; }
wait_for 20 tx_rose || fail "no LLDPDU on the wire after fw_lldp off and lldpcli update"
stop_lldpd
log "lldp-simnic: all checks passed"
