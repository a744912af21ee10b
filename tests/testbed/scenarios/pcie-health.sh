# shellcheck shell=sh
# PCIe link health (docs/pcie.md) against the kernel's own sysfs files of simnic's PCI functions.
# simnic gives each function a PCI Express capability (16 GT/s x16 as a ConnectX-6 Dx) and the
# PCI core formats current_link_speed/width and max_link_speed/width from it; the AER files are
# the bound driver's, in aer.c's format (tests/testbed/simnic/pci.c says why). Then:
#  1. the sysfs text is what the kernel prints for that capability ("16.0 GT/s PCIe", 16);
#  2. the exporter (--pcie.interval=1s, its minimum) serves roce_pcie_link_speed_gts and
#     roce_pcie_link_width {bound=current|max} equal to `cat` of those files (lspci -vv LnkCap and
#     LnkSta too when lspci is in the guest), and roce_pcie_aer_errors_total{side="function"} equal
#     to the TOTAL_ERR_* lines; a function on a root bus has no upstream side;
#  3. `pcie_link 8 8` (the NIC trains at 8 GT/s x8): both functions of the slot read 8 GT/s x8 in
#     sysfs and in /metrics, the maximum stays 16 GT/s x16 (RoceQosPcieLinkDegraded's condition,
#     current < max, holds);
#  4. AER errors counted through the control file: the sysfs bit lines and totals move, and the
#     exporter's three classes equal the TOTAL lines.
require exporter simnic

# shellcheck disable=SC2046 # netdev names, one word each
set -- $(simnic_netdevs)
[ $# -ge 2 ] || fail "need two simnic ports (one dual-port NIC), got '$*'"
a=$1 b=$2
fn() { readlink -f "/sys/class/net/$1/device"; }
fa=$(fn "$a") fb=$(fn "$b")
assert_eq "$(dirname "$fa")" "$(dirname "$fb")" "$a and $b on one bus"
# A function on a root bus (pci0000:BB): no upstream port.
assert_match '^pci[0-9a-f]{4}:[0-9a-f]{2}$' "$(basename "$(dirname "$fa")")" "$a's parent"

# 1. The kernel's text for the capability simnic advertises.
for f in "$fa" "$fb"; do
  assert_eq "16.0 GT/s PCIe" "$(cat "$f/current_link_speed")" "$f current_link_speed"
  assert_eq "16.0 GT/s PCIe" "$(cat "$f/max_link_speed")" "$f max_link_speed"
  assert_eq 16 "$(cat "$f/current_link_width")" "$f current_link_width"
  assert_eq 16 "$(cat "$f/max_link_width")" "$f max_link_width"
  assert_eq "TOTAL_ERR_COR 0" "$(tail -n 1 "$f/aer_dev_correctable")" "$f aer_dev_correctable"
  assert_eq 9 "$(wc -l <"$f/aer_dev_correctable")" "$f aer_dev_correctable lines (8 named bits + total)"
  assert_eq 24 "$(wc -l <"$f/aer_dev_nonfatal")" "$f aer_dev_nonfatal lines (23 named bits + total)"
done
# A config space of 256 bytes: the core's probe of the extended space failed cleanly.
assert_eq 256 "$(wc -c <"$fa/config")" "$a config space size"

gts() { sed 's/ GT\/s.*//' "$1"; } # "8.0 GT/s PCIe" -> 8.0
pcie_now() { # FILE
  scrape "$1.all"
  grep '^roce_pcie_' "$1.all" >"$1" || true
}
# Every roce_pcie_* series of NETDEV equals the sysfs files (FILE: a pcie_now output).
agrees() { # FILE NETDEV
  _f=$(fn "$2")
  num_eq "$(gts "$_f/current_link_speed")" "$(metric_from "$1" roce_pcie_link_speed_gts "netdev=$2" bound=current)" &&
    num_eq "$(gts "$_f/max_link_speed")" "$(metric_from "$1" roce_pcie_link_speed_gts "netdev=$2" bound=max)" &&
    num_eq "$(cat "$_f/current_link_width")" "$(metric_from "$1" roce_pcie_link_width "netdev=$2" bound=current)" &&
    num_eq "$(cat "$_f/max_link_width")" "$(metric_from "$1" roce_pcie_link_width "netdev=$2" bound=max)" || return 1
  for _c in correctable:COR nonfatal:NONFATAL fatal:FATAL; do
    _t=$(sed -n "s/^TOTAL_ERR_${_c#*:} //p" "$_f/aer_dev_${_c%:*}")
    num_eq "$_t" "$(metric_from "$1" roce_pcie_aer_errors_total "netdev=$2" side=function "class=${_c%:*}")" || return 1
  done
}
agree_now() { pcie_now "$TESTBED_WORK/pcie.txt" && agrees "$TESTBED_WORK/pcie.txt" "$1"; }
show() { # NETDEV: what differs, for a failure message
  _f=$(fn "$1")
  log "sysfs $1: $(cat "$_f/current_link_speed") x$(cat "$_f/current_link_width"), max $(cat "$_f/max_link_speed") x$(cat "$_f/max_link_width"), $(grep -h TOTAL "$_f"/aer_dev_* | tr '\n' ' ')"
  grep "netdev=\"$1\"" "$TESTBED_WORK/pcie.txt" >&2
}
lspci_agrees() { # NETDEV SPEED WIDTH MAXSPEED MAXWIDTH
  command -v lspci >/dev/null 2>&1 || return 0
  _v=$(lspci -vv -s "$(basename "$(fn "$1")")")
  echo "$_v" | grep -q "LnkCap:.*Speed ${4}GT/s.*Width x$5" || fail "$1 lspci LnkCap: $(echo "$_v" | grep LnkCap:)"
  echo "$_v" | grep -q "LnkSta:.*Speed ${2}GT/s.*Width x$3" || fail "$1 lspci LnkSta: $(echo "$_v" | grep LnkSta:)"
}

# 2. The exporter against sysfs, at 16 GT/s x16 with no AER errors.
start_exporter --pcie.interval=1s "--collector.device-include=^($a|$b)\$"
wait_for 10 agree_now "$a" || { show "$a"; fail "$a: roce_pcie_* do not equal sysfs within 10 s"; }
agrees "$TESTBED_WORK/pcie.txt" "$b" || { show "$b"; fail "$b: roce_pcie_* do not equal sysfs"; }
assert_eq "" "$(_series_matching "$TESTBED_WORK/pcie.txt" roce_pcie_aer_errors_total side=upstream)" "upstream AER series"
# 4 link + 3 AER series per netdev (no upstream port, no mlx5 PCIe counters in this group).
assert_eq 7 "$(grep -c "netdev=\"$a\"" "$TESTBED_WORK/pcie.txt")" "$a roce_pcie_* series"
lspci_agrees "$a" 16 16 16 16
log "$a at 16 GT/s x16: exporter equals sysfs"

# 3. Trained down to 8 GT/s x8 (port a's control file; the link is the slot's, so b too).
simnic_ctl "$a" "pcie_link 8 8"
for f in "$fa" "$fb"; do
  assert_eq "8.0 GT/s PCIe" "$(cat "$f/current_link_speed")" "$f current_link_speed after pcie_link 8 8"
  assert_eq 8 "$(cat "$f/current_link_width")" "$f current_link_width after pcie_link 8 8"
  assert_eq "16.0 GT/s PCIe" "$(cat "$f/max_link_speed")" "$f max_link_speed after pcie_link 8 8"
done
degraded() { # NETDEV: RoceQosPcieLinkDegraded's expression, per netdev
  awk -v n="netdev=\"$1\"" '
    index($0, n) && /^roce_pcie_link_(speed_gts|width)\{/ {
      split($1, p, "{"); k = p[1] (index($0, "bound=\"max\"") ? " max" : " cur"); v[k] = $2
    }
    END {
      exit !(v["roce_pcie_link_speed_gts cur"] < v["roce_pcie_link_speed_gts max"] &&
             v["roce_pcie_link_width cur"] < v["roce_pcie_link_width max"])
    }' "$TESTBED_WORK/pcie.txt"
}
t0=$(cut -d' ' -f1 /proc/uptime)
wait_for 5 agree_now "$a" || { show "$a"; fail "$a: 8 GT/s x8 not in /metrics within 5 s"; }
log "$a: retrained link in /metrics after $(awk -v t="$t0" '{ printf "%.1f", $1 - t }' /proc/uptime) s"
agrees "$TESTBED_WORK/pcie.txt" "$b" || { show "$b"; fail "$b: roce_pcie_* do not equal sysfs after pcie_link"; }
for n in "$a" "$b"; do
  assert_num_eq 8 "$(metric_from "$TESTBED_WORK/pcie.txt" roce_pcie_link_speed_gts "netdev=$n" bound=current)" "$n current speed"
  assert_num_eq 16 "$(metric_from "$TESTBED_WORK/pcie.txt" roce_pcie_link_speed_gts "netdev=$n" bound=max)" "$n max speed"
  degraded "$n" || fail "$n: current not below max in /metrics (RoceQosPcieLinkDegraded would not fire)"
done
lspci_agrees "$a" 8 8 16 16
simnic_ctl "$a" "pcie_link 16 16"
wait_for 5 agree_now "$a" || { show "$a"; fail "$a: 16 GT/s x16 not back in /metrics within 5 s"; }
degraded "$a" && fail "$a: still degraded at 16 GT/s x16"

# 4. AER errors: function a only (each function has its own AER counters).
simnic_ctl "$a" "aer correctable BadTLP 3; aer correctable RxErr; aer nonfatal CmpltTO 2; aer fatal DLP"
assert_eq "BadTLP 3" "$(grep '^BadTLP ' "$fa/aer_dev_correctable")" "$a BadTLP line"
assert_eq "TOTAL_ERR_COR 4" "$(tail -n 1 "$fa/aer_dev_correctable")" "$a correctable total"
assert_eq "CmpltTO 2" "$(grep '^CmpltTO ' "$fa/aer_dev_nonfatal")" "$a CmpltTO line"
assert_eq "TOTAL_ERR_FATAL 1" "$(tail -n 1 "$fa/aer_dev_fatal")" "$a fatal total"
assert_eq "TOTAL_ERR_COR 0" "$(tail -n 1 "$fb/aer_dev_correctable")" "$b correctable total"
wait_for 5 agree_now "$a" || { show "$a"; fail "$a: AER totals not in /metrics within 5 s"; }
agrees "$TESTBED_WORK/pcie.txt" "$b" || { show "$b"; fail "$b: roce_pcie_* do not equal sysfs after AER"; }
for c in correctable:4 nonfatal:2 fatal:1; do
  assert_num_eq "${c#*:}" "$(metric_from "$TESTBED_WORK/pcie.txt" roce_pcie_aer_errors_total "netdev=$a" side=function "class=${c%:*}")" "$a AER ${c%:*}"
done

# Bad control input is refused whole.
for bad in "pcie_link 32 16" "pcie_link 8 12" "pcie_link 8" "aer fatal BadTLP" "aer warm RxErr" "aer correctable RxErr x"; do
  printf '%s\n' "$bad" >"$SIMNIC_DEBUGFS/$a/ctl" 2>/dev/null && fail "'$bad' was accepted"
done
scrape "$TESTBED_WORK/all.txt"
errors=$(metric_series "$TESTBED_WORK/all.txt" roce_exporter_pcie_read_errors_total | awk '{ s += $NF } END { print s + 0 }')
assert_eq 0 "$errors" "PCIe read errors"
stop_exporter
