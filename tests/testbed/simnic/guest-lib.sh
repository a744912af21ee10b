# shellcheck shell=sh
# Guest helpers for the simulated ConnectX (busybox sh). The testbed runner copies this file to
# /testbed/simnic-lib.sh; a scenario that wants them runs `. /testbed/simnic-lib.sh`.
# tests/testbed/simnic/README.md documents the control file these read.

SIMNIC_DEBUGFS=${SIMNIC_DEBUGFS:-/sys/kernel/debug/simnic}

# simnic_value NETDEV COUNTER: the counter as the device reports it (Q counters wrap at 2^32).
simnic_value() {
  awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }' "$SIMNIC_DEBUGFS/$1/ctl"
}
# simnic_rate NETDEV COUNTER: the rate the counter currently advances at (per second; 0 while
# the port is down; storms override the rates of the counters they drive).
simnic_rate() {
  awk -v n="$2" '$1 == n { print $3; f = 1 } END { exit !f }' "$SIMNIC_DEBUGFS/$1/ctl"
}
# simnic_state NETDEV KEY: one field of the "# state" line (running, cable, carrier, pfc_en,
# pause_rx, pause_tx, trust, dscp_apps, dcbx, dcbx_cap, cable_len, stall_ms, ecn_np, ecn_rp).
simnic_state() {
  sed -n 's/^# state //p' "$SIMNIC_DEBUGFS/$1/ctl" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# simnic_storm_phase NETDEV PRIO DIR: pausing|warning|prevented, or nothing without a storm.
simnic_storm_phase() {
  sed -n "s/^# storm prio=$2 dir=$3 .*phase=//p" "$SIMNIC_DEBUGFS/$1/ctl"
}
# DCB netlink notifications seen for NETDEV (the module keeps the last 64 of all devices):
# simnic_dcb_event_seq NETDEV: sequence number of the latest one (0 if none; compare before and
# after an action).
simnic_dcb_event_seq() {
  tail -n 1 "$SIMNIC_DEBUGFS/$1/dcb_events" | awk '{ s = $1 } END { print s + 0 }'
}
# simnic_dcb_sets_after NETDEV SEQ: how many RTM_SETDCB notifications about NETDEV carry a sequence
# number above SEQ (taken with simnic_dcb_event_seq; 0 right after a module load, which restarts
# the numbering). Each DCB_CMD_IEEE_SET/IEEE_DEL a writer sends is one, even a failed one; control
# file changes are none, so a scenario that changes state only through the control file and sysfs
# counts exactly the writes of everything else. The module keeps the last 64 notifications of all
# devices: read it before more than 64 can have come (a count of 0 is exact as long as no other
# device was notified 64 times since, as NETDEV's latest one would still be listed).
simnic_dcb_sets_after() {
  awk -v s="$2" '$1 > s + 0 && $2 == "RTM_SETDCB" { n++ } END { print n + 0 }' "$SIMNIC_DEBUGFS/$1/dcb_events"
}

# --- LLDP frames (rx_frame, fw_lldp) ------------------------------------------------------------
# simnic_frames NETDEV KEY: one field of the "# frames" line (fw_lldp, rx_frames, fw_lldp_rx,
# fw_lldp_tx).
simnic_frames() {
  sed -n 's/^# frames //p' "$SIMNIC_DEBUGFS/$1/ctl" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# simnic_rx NETDEV HEX: NETDEV receives the Ethernet frame HEX (no FCS, 60 bytes or more) from the
# wire; status 1 if the control file refuses it.
simnic_rx() { printf 'rx_frame %s\n' "$2" >"$SIMNIC_DEBUGFS/$1/ctl"; }

# LLDPDU builders (IEEE 802.1AB-2016 clause 8; the organizationally specific TLVs of IEEE 802.1Q-2018
# Annex D and IEEE 802.3-2018 clause 79). Each prints lowercase hex without separators; lldp_frame
# joins them into a frame for simnic_rx.
# _lldp_hex STRING: the bytes of STRING.
_lldp_hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
# _lldp_u8/_lldp_u16 VALUE: one/two bytes, big endian.
_lldp_u8() { printf '%02x' $(($1 & 255)); }
_lldp_u16() { printf '%04x' $(($1 & 65535)); }
# lldp_tlv TYPE VALUE_HEX: a TLV (7-bit type, 9-bit length, value).
lldp_tlv() { _lldp_u16 $((($1 << 9) | (${#2} / 2))) && printf '%s' "$2"; }
# lldp_org OUI_HEX SUBTYPE VALUE_HEX: an organizationally specific TLV (type 127).
lldp_org() { lldp_tlv 127 "$1$(_lldp_u8 "$2")$3"; }
# lldp_chassis_mac MAC: Chassis ID, subtype 4 (MAC address), MAC as aa:bb:cc:dd:ee:ff.
lldp_chassis_mac() { lldp_tlv 1 "04$(echo "$1" | tr -d ':')"; }
# lldp_port_ifname NAME / lldp_port_local ID: Port ID, subtype 5 (interface name) / 7 (local).
lldp_port_ifname() { lldp_tlv 2 "05$(_lldp_hex "$1")"; }
lldp_port_local() { lldp_tlv 2 "07$(_lldp_hex "$1")"; }
# lldp_ttl SECONDS: Time To Live (0 withdraws the neighbour at once).
lldp_ttl() { lldp_tlv 3 "$(_lldp_u16 "$1")"; }
lldp_port_descr() { lldp_tlv 4 "$(_lldp_hex "$1")"; }
lldp_sysname() { lldp_tlv 5 "$(_lldp_hex "$1")"; }
lldp_sysdescr() { lldp_tlv 6 "$(_lldp_hex "$1")"; }
lldp_end() { printf '0000'; }
# lldp_mfs BYTES: IEEE 802.3 Maximum Frame Size (OUI 00-12-0F subtype 4).
lldp_mfs() { lldp_org 00120f 4 "$(_lldp_u16 "$1")"; }
# _lldp_bits LIST: the bitmap of a comma-separated list of numbers 0-7 ("" or "none": 0).
_lldp_bits() {
  _lb=0
  for _b in $(echo "$1" | tr ',' ' '); do [ "$_b" = none ] || _lb=$((_lb | (1 << _b))); done
  echo "$_lb"
}
# lldp_pfc WILLING MBC CAP PRIOS: IEEE 802.1Qaz PFC Configuration (OUI 00-80-C2 subtype 0x0B):
# willing (bit 7) | MBC (bit 6) | PFC cap (bits 3-0), then the enable bitmap, bit n = priority n.
# PRIOS: comma-separated priorities, e.g. 3,4 (none: PFC off everywhere).
lldp_pfc() {
  lldp_org 0080c2 11 "$(_lldp_u8 $((($1 << 7) | ($2 << 6) | ($3 & 15))))$(_lldp_u8 "$(_lldp_bits "$4")")"
}
# lldp_app ENTRY...: Application Priority (subtype 0x0C): a reserved byte, then per ENTRY
# "PRIO:SEL:PROTO" three bytes: priority (bits 7-5) | selector (bits 2-0), protocol (16 bits).
# SEL 5 = DSCP (PROTO the code point), 1 = ethertype, 2 = TCP/SCTP port, 3 = UDP/DCCP port.
lldp_app() {
  _la=00
  for _e in "$@"; do
    _la=$_la$(_lldp_u8 $(((${_e%%:*} << 5) | ($(echo "$_e" | cut -d: -f2) & 7))))$(_lldp_u16 "${_e##*:}")
  done
  lldp_org 0080c2 12 "$_la"
}
# _lldp_ets_tables PRIO_TC BW TSA: the 20 bytes ETS Configuration and Recommendation share after
# their first byte: priority assignment (4 bytes, priority 0 in the high nibble of the first),
# TC bandwidth % (8 bytes), TSA (8 bytes: 0 strict, 1 credit-based shaper, 2 ETS, 255 vendor).
# Each argument is 8 comma-separated numbers.
_lldp_ets_tables() {
  set -- "$(echo "$1" | tr ',' ' ')" "$(echo "$2" | tr ',' ' ')" "$(echo "$3" | tr ',' ' ')"
  # shellcheck disable=SC2086 # split the lists into words
  printf '%x' $1
  for _v in $2 $3; do _lldp_u8 "$_v"; done
}
# lldp_ets_cfg WILLING CBS MAX_TCS PRIO_TC BW TSA: ETS Configuration (subtype 0x09, 25 bytes with
# OUI and subtype): willing (bit 7) | CBS (bit 6) | max TCs (bits 2-0, 0 means 8), then the tables.
lldp_ets_cfg() {
  lldp_org 0080c2 9 "$(_lldp_u8 $((($1 << 7) | ($2 << 6) | ($3 & 7))))$(_lldp_ets_tables "$4" "$5" "$6")"
}
# lldp_ets_reco PRIO_TC BW TSA: ETS Recommendation (subtype 0x0A): a reserved byte, the tables.
lldp_ets_reco() { lldp_org 0080c2 10 "00$(_lldp_ets_tables "$1" "$2" "$3")"; }
# lldp_frame CHASSIS_MAC SYSNAME PORT_ID TTL [TLV_HEX...]: an LLDP frame from CHASSIS_MAC to the
# nearest-bridge group address 01:80:c2:00:00:0e: Chassis ID (MAC), Port ID (interface name),
# TTL, System Name, the extra TLVs, End; padded to the 60-byte minimum frame.
lldp_frame() {
  _lf_mac=$1
  _lf_f=0180c200000e$(echo "$_lf_mac" | tr -d ':')88cc$(lldp_chassis_mac "$_lf_mac")$(lldp_port_ifname "$3")
  _lf_f=$_lf_f$(lldp_ttl "$4")$(lldp_sysname "$2")
  shift 4
  for _t in "$@"; do _lf_f=$_lf_f$_t; done
  _lf_f=$_lf_f$(lldp_end)
  while [ ${#_lf_f} -lt 120 ]; do _lf_f=${_lf_f}00; done
  echo "$_lf_f"
}
