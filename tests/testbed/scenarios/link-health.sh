# shellcheck shell=sh
# Link health (docs/link.md) against simnic's model of mlx5's link counters, on whichever kernel
# the testbed booted. Distinct values set through the control file; each roce_link_* series must
# equal the real tool that reads the same figure and carry the source this kernel serves it from:
#  * 5.13 and later: the FEC mode and blocks (`ethtool -I --show-fec`, RS totals and BASE-R per
#    lane summed by the kernel), eth-phy SymbolErrorDuringCarrier and eth-mac
#    FrameCheckSequenceErrors (`ethtool -S --all-groups`) from source="netlink"; before: no FEC
#    series, symbol and FCS errors from mlx5's names (plain `ethtool -S`), source="ethtool";
#  * link-down events (`link_down_events_phy`) from netlink on 6.2 and later, else from ethtool;
#    a link down through the control file raises them by exactly 1;
#  * with simnic's rx_bits_phy knob, roce_link_pre_fec_ber = Δrx_corrected_bits_phy / Δrx_bits_phy.
require exporter simnic
sim=$(simnic_netdevs | head -n1)

if kernel_at_least 5.13; then std_src=netlink fec=1; else std_src=ethtool fec=0; fi
if kernel_at_least 6.2; then down_src=netlink; else down_src=ethtool; fi
log "kernel $(uname -r): FEC ${fec}, symbol/FCS from $std_src, link-down from $down_src"

# --- oracles, each tool run once per comparison ---
# read_oracles: `ethtool -S`, and where the kernel has them `ethtool -S --all-groups` (IEEE 802.3
# standard statistics) and `ethtool -I --show-fec` (FEC mode and statistics).
read_oracles() {
  ethtool_stats "$sim" >"$TESTBED_WORK/stats"
  [ "$std_src" = netlink ] && $ETHTOOL -S "$sim" --all-groups >"$TESTBED_WORK/std"
  $ETHTOOL -I --show-fec "$sim" >"$TESTBED_WORK/fec"
}
# oracle FILE NAME: the value after "NAME:" (or "NAME ") in the tool output FILE.
oracle() { awk -v n="$2" '$1 == n || $1 == n ":" { print $2; f = 1 } END { exit !f }' "$TESTBED_WORK/$1"; }
fec_active() { sed -n 's/^Active FEC encoding: //p' "$TESTBED_WORK/fec"; }

# series NAME VALUE SOURCE: the exported series equals VALUE with label source=SOURCE.
series() {
  _v=$(metric_from "$METRICS" "$1" netdev="$sim") || return 1
  num_eq "$2" "$_v" || return 1
  [ "$(metric_label "$METRICS" "$1" source netdev="$sim")" = "$3" ]
}
WHY=
agree() {
  scrape
  read_oracles
  symbols=$(oracle stats rx_symbol_err_phy) fcs=$(oracle stats rx_crc_errors_phy)
  downs=$(oracle stats link_down_events_phy)
  if [ "$std_src" = netlink ]; then
    num_eq "$symbols" "$(oracle std eth-phy-SymbolErrorDuringCarrier)" || { WHY="eth-phy != rx_symbol_err_phy"; return 1; }
    num_eq "$fcs" "$(oracle std eth-mac-FrameCheckSequenceErrors)" || { WHY="eth-mac != rx_crc_errors_phy"; return 1; }
  fi
  series roce_link_symbol_errors_total "$symbols" "$std_src" || { WHY="symbol errors, want $symbols from $std_src"; return 1; }
  series roce_link_fcs_errors_total "$fcs" "$std_src" || { WHY="FCS errors, want $fcs from $std_src"; return 1; }
  series roce_link_down_events_total "$downs" "$down_src" || { WHY="link-down events, want $downs from $down_src"; return 1; }
  if [ "$fec" = 1 ]; then
    _mode=$(fec_active | tr '[:upper:]' '[:lower:]')
    num_eq 1 "$(metric_from "$METRICS" roce_link_fec_info netdev="$sim" mode="$_mode")" || { WHY="fec_info mode $_mode"; return 1; }
    num_eq "$(oracle fec corrected_blocks)" "$(metric_from "$METRICS" roce_link_fec_corrected_blocks_total netdev="$sim")" || { WHY="corrected blocks"; return 1; }
    num_eq "$(oracle fec uncorrectable_blocks)" "$(metric_from "$METRICS" roce_link_fec_uncorrectable_blocks_total netdev="$sim")" || { WHY="uncorrectable blocks"; return 1; }
  else
    ! grep -q '^roce_link_fec' "$METRICS" || { WHY="FEC series on a kernel without FEC netlink"; return 1; }
  fi
}
check() {
  wait_for 10 agree || { grep "^roce_link\|^roce_exporter_link" "$METRICS" >&2; fail "$1: $WHY"; }
  log "$1: agrees"
}

# Frozen, distinct values: a figure served from the wrong counter cannot match.
simnic_ctl "$sim" "rate * 0; fec rs; set rs_fec_corrected_blocks 1000003; set rs_fec_uncorrectable_blocks 17"
simnic_ctl "$sim" "set rx_symbol_err_phy 2029; set rx_crc_errors_phy 3037; set rx_pcs_symbol_err_phy 41"
simnic_ctl "$sim" "set link_down_events_phy 5"
start_exporter --link.interval=1s
check "RS"
# Without FEC netlink (5.10) ethtool still reads the mode, through the ioctl; the exporter does not.
assert_eq RS "$(fec_active)" "ethtool --show-fec active encoding"
if [ "$std_src" = netlink ]; then
  # The same figures in ethtool's JSON output.
  $ETHTOOL --json -I --show-fec "$sim" | tr -d ' \n' | grep -q '"corrected_blocks":{"total":1000003}' ||
    fail "ethtool --json -I --show-fec: no corrected_blocks total 1000003"
  $ETHTOOL --json -S "$sim" --all-groups | tr -d ' \n' | grep -q '"FrameCheckSequenceErrors":3037' ||
    fail "ethtool --json -S --all-groups: no FrameCheckSequenceErrors 3037"
fi
if [ "$fec" = 1 ]; then
  assert_num_eq 1000003 "$(oracle fec corrected_blocks)" "ethtool -I --show-fec corrected_blocks"
  # BASE-R: mlx5 reports per lane, the kernel sums them into element 0.
  simnic_ctl "$sim" "fec baser; set fc_fec_corrected_blocks_lane0 101; set fc_fec_corrected_blocks_lane1 202"
  simnic_ctl "$sim" "set fc_fec_corrected_blocks_lane2 303; set fc_fec_corrected_blocks_lane3 404"
  simnic_ctl "$sim" "set fc_fec_uncorr_blocks_lane1 7; set fc_fec_uncorr_blocks_lane3 9"
  check "BASE-R per lane"
  assert_num_eq 1010 "$(oracle fec corrected_blocks)" "ethtool -I --show-fec corrected_blocks (BASE-R lanes summed)"
  assert_num_eq 16 "$(oracle fec uncorrectable_blocks)" "ethtool -I --show-fec uncorrectable_blocks (BASE-R)"
  assert_eq "101 202 303 404" "$(awk '/^  corrected_blocks:/ { on = 1; next } /^  [a-z]/ { on = 0 } on && /Lane/ { printf "%s%s", s, $3; s = " " }' "$TESTBED_WORK/fec")" "BASE-R corrected blocks per lane"
fi

# A link down through the control file: exactly one more link-down event.
downs0=$(metric_from "$METRICS" roce_link_down_events_total netdev="$sim")
simnic_ctl "$sim" "carrier off; carrier on"
check "one link down"
assert_num_eq 6 "$(oracle stats link_down_events_phy)" "link_down_events_phy after one link down"
assert_num_eq "$((downs0 + 1))" "$(metric_from "$METRICS" roce_link_down_events_total netdev="$sim")" "roce_link_down_events_total after one link down"

# Pre-FEC BER: constant rates make every window's ratio the same, 4e6 / 1e11; the counters are
# integers, so a window of a second or more is off by at most 1 / 4e6 relative.
metric_from "$METRICS" roce_link_pre_fec_ber netdev="$sim" >/dev/null && fail "a BER series without rx_bits_phy"
simnic_ctl "$sim" "rate rx_bits_phy 100000000000; rate rx_err_lane_0_phy 1000000; rate rx_err_lane_2_phy 3000000"
echo 1 >/sys/module/simnic/parameters/rx_bits_phy
ber_ok() {
  scrape
  _b=$(metric_from "$METRICS" roce_link_pre_fec_ber netdev="$sim") || return 1
  awk -v b="$_b" 'BEGIN { exit !(b > 0 && (b - 4e-5) / 4e-5 < 1e-5 && (4e-5 - b) / 4e-5 < 1e-5) }'
}
wait_for 10 ber_ok || fail "roce_link_pre_fec_ber is '$(metric_from "$METRICS" roce_link_pre_fec_ber netdev="$sim")', want 4e-05"
log "pre-FEC BER $(metric_from "$METRICS" roce_link_pre_fec_ber netdev="$sim")"
echo 0 >/sys/module/simnic/parameters/rx_bits_phy
exporter_alive
assert_no_negative "$METRICS"
stop_exporter
