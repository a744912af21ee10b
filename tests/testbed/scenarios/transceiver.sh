# shellcheck shell=sh
# The transceiver collector (collectors/transceiver/module_eeprom.h) against `ethtool -m`, for both
# module kinds simnic carries: a QSFP28 (SFF-8636, even ports) and a QSFP-DD (CMIS 5.0, odd ports).
# For each: the control file sets temperature, voltage and per-lane Rx/Tx power and bias; then
#  1. `ethtool -m` (the oracle, ethtool netlink) shows exactly the values that were set;
#  2. the collector's live read (transceiver_probe IFNAME, ethtool netlink from our code) prints
#     every monitor, flag and threshold ethtool prints, with the same value;
#  3. the raw half pages ethtool dumps (`ethtool -m IF raw on offset 128 length 128 page N`) decode
#     to exactly the live read (same bytes, same decoder);
#  4. the ioctl fallback reads the same QSFP28 (and the CMIS identity and module monitors);
#  5. pushing the temperature above the module's high-alarm threshold raises the alarm in both.
# Then the exporter (--transceiver.interval=1s, its own poller thread):
#  6. every roce_transceiver_* series of both modules equals what `ethtool -m` prints (identity,
#     monitors, flags, thresholds; units converted, within ethtool's printed precision);
#  7. a temperature and Rx power change made through simnic shows in the first snapshot after the
#     poller's next round (on the exporter's clock: within one interval + one round + 1 s), and the
#     temperature high-alarm flag appears as a series (value 1) once the temperature is above the
#     module's threshold, and clears when it is back;
#  8. roce_exporter_transceiver_access_info says which interface read each module.
# Kernels before 5.13 have no ETHTOOL_MSG_MODULE_EEPROM_GET: ethtool, the probe and the exporter
# fall back to the ETHTOOL_GMODULEEEPROM ioctl, whose flat image holds SFF-8636 pages 00h-03h but
# only page 00h of a CMIS module. There (docs/kernels.md) the exact degraded behaviour is asserted:
# the QSFP28 as above (raw pages cut from the flat dump `ethtool -m IF raw on`); for the CMIS port
# identity, temperature and voltage equal ethtool, no lane series and no thresholds exist, the
# access metric says ioctl with unread pages 01h 02h 11h, and the exporter logs
# msg="transceiver via ioctl" once per netdev.
require simnic
PROBE=/testbed/bin/transceiver_probe
[ -x "$PROBE" ] || skip "transceiver_probe not built (cmake --build build --target transceiver_probe)"

# ethtool -m text -> the probe's key=value names (values as ethtool prints them).
ethtool_kv() {
  ethtool -m "$1" | awk -F' : ' '
    function key(label) { gsub(/^[ \t]+|[ \t]+$/, "", label); return label }
    function onoff(v) { return v ~ /^On/ ? 1 : 0 }
    function kind(l) {
      if (l ~ /high alarm/) return "high_alarm"; if (l ~ /low alarm/) return "low_alarm"
      if (l ~ /high warning/) return "high_warning"; if (l ~ /low warning/) return "low_warning"
      return ""
    }
    function monitor(l) {
      if (l ~ /[Bb]ias/) return "tx_bias_ma"; if (l ~ /Module temperature/) return "temperature_c"
      if (l ~ /Module voltage/) return "voltage_v"
      if (l ~ /rx power|Rcvr|Receiver|[Rr]x optical|Rx power/) return "rx_power_mw"
      if (l ~ /output power|tx power|Transmit|Tx power/) return "tx_power_mw"
      return ""
    }
    NF < 2 { next }
    {
      l = key($1); v = $2; sub(/^[ \t]+/, "", v); split(v, w, " ")
      lane = ""
      if (match(l, /\((Channel|Chan|Lane) [0-9]+\)/)) {
        lane = substr(l, RSTART, RLENGTH); gsub(/[^0-9]/, "", lane)
      }
      m = monitor(l); k = kind(l); f = m; sub(/_(mw|ma|c|v)$/, "", f)
      if (l == "Vendor name") print "vendor_name=" v
      else if (l == "Vendor PN") print "part_number=" v
      else if (l == "Vendor SN") print "serial_number=" v
      else if (l == "Vendor rev") print "revision=" v
      else if (m == "") next
      else if (l ~ /threshold/ && k != "") print "threshold_" m "_" k "=" w[1]
      else if (k != "" && lane != "") print "lane" lane "_" f "_" k "=" onoff(v)
      else if (k != "") print f "_" k "=" onoff(v)
      else if (lane != "") print "lane" lane "_" m "=" w[1]
      else if (l == "Module temperature" || l == "Module voltage") print m "=" w[1]
    }' | sort
}

# Half pages as ethtool dumps them (its netlink reads, not ours), for transceiver_probe --pages.
# Through the ioctl (kernels before 5.13), cut from ethtool's flat dump: lower page at 0, upper
# page N at 128 * (N + 1) (SFF-8636 640 bytes, CMIS 256: lower page and 00h).
dump_pages() { # IFNAME DIR PAGE...
  _dev=$1 _dir=$2
  shift 2
  mkdir -p "$_dir"
  if [ "$access" = ioctl ]; then
    ethtool -m "$_dev" raw on >"$_dir/flat" || fail "ethtool raw (flat) $_dev"
    dd if="$_dir/flat" of="$_dir/lower" bs=128 count=1 2>/dev/null
    for _p in "$@"; do
      dd if="$_dir/flat" of="$_dir/$_p" bs=128 skip=$((0x$_p + 1)) count=1 2>/dev/null
      [ "$(wc -c <"$_dir/$_p")" -eq 128 ] || fail "$_dev: page $_p not in the flat dump ($(wc -c <"$_dir/flat") bytes)"
    done
    return
  fi
  ethtool -m "$_dev" raw on offset 0 length 128 >"$_dir/lower" || fail "ethtool raw lower $_dev"
  for _p in "$@"; do
    # ethtool 6.1 refuses "page 0" ("bad command line argument"): page 00h is the default.
    if [ "$_p" = 00 ]; then _sel=; else _sel="page 0x$_p"; fi
    # shellcheck disable=SC2086
    ethtool -m "$_dev" raw on offset 128 length 128 $_sel >"$_dir/$_p" ||
      fail "ethtool raw page $_p of $_dev"
  done
}

value_of() { sed -n "s/^$2=//p" "$1"; }

# Every key ethtool shows must be in the probe's output with the same value.
# ethtool 6.1 prints CMIS per-lane flags wrongly (it tests `flag byte & channel index` instead of
# the lane's bit: lane 3's bit shows as On for lanes 5-8), so for CMIS those lines are left out here
# and the raw page 11h bytes are checked instead (check_module).
agree_with_ethtool() { # IFNAME LABEL MIN_KEYS [cmis]
  if [ "${4:-}" = cmis ]; then
    ethtool_kv "$1" | grep -Ev '^lane[0-9]+_[a-z_]+_(high|low)_(alarm|warning)=' >"$TESTBED_WORK/$1.ethtool"
  else
    ethtool_kv "$1" >"$TESTBED_WORK/$1.ethtool"
  fi
  "$PROBE" "$1" >"$TESTBED_WORK/$1.probe" || fail "transceiver_probe $1 failed"
  n=$(wc -l <"$TESTBED_WORK/$1.ethtool")
  [ "$n" -ge "$3" ] || {
    ethtool -m "$1" >&2
    fail "$1: only $n comparable lines in ethtool -m ($2), expected >= $3"
  }
  grep -Fxv -f "$TESTBED_WORK/$1.probe" "$TESTBED_WORK/$1.ethtool" >"$TESTBED_WORK/$1.diff"
  if [ -s "$TESTBED_WORK/$1.diff" ]; then
    cut -d= -f1 "$TESTBED_WORK/$1.diff" | while read -r k; do
      log "$k: ethtool $(value_of "$TESTBED_WORK/$1.ethtool" "$k"), probe $(value_of "$TESTBED_WORK/$1.probe" "$k")"
    done
    ethtool -m "$1" >&2
    fail "$1 ($2): $(wc -l <"$TESTBED_WORK/$1.diff") values of ethtool -m differ from the collector"
  fi
  log "$1 ($2): $n values agree with ethtool -m"
}

# CMIS through the ioctl: the lower page and page 00h only (no lanes, flags of lanes, thresholds).
degraded() { [ "$access" = ioctl ] && [ "$1" = cmis ]; }
# Comparable ethtool -m lines: identity 4, module monitors 2, lanes 3 each, thresholds and flags 20;
# a degraded CMIS read has identity, module monitors and their 8 flags (14 on 5.10).
min_keys() { # KIND LANES
  if degraded "$1"; then echo 14; else echo $((2 + 3 * $2 + 20)); fi
}

check_module() { # IFNAME KIND LANES EXTRA_PAGES HIGH_ALARM_MILLI_C
  dev=$1 kind=$2 lanes=$3 pages=$4
  degraded "$kind" && pages=
  simnic_ctl "$dev" "module temp 41500; module vcc 3312000; module rx_power all 812; module tx_power all 655; module bias all 7020"
  simnic_ctl "$dev" "module rx_power 2 430; module tx_power $lanes 701; module bias 1 6110"
  # Lane 3's Rx power between the low alarm (40 uW) and low warning (0.09/0.1 mW) thresholds.
  simnic_ctl "$dev" "module rx_power 3 50"
  agree_with_ethtool "$dev" "$kind" "$(min_keys "$kind" "$lanes")" "$kind"
  p=$TESTBED_WORK/$dev.probe
  assert_eq "$kind" "$(value_of "$p" spec)" "$dev spec"
  # The values the control file set, as ethtool shows them (independent of our decoder).
  e=$TESTBED_WORK/$dev.ethtool
  assert_eq 41.50 "$(value_of "$e" temperature_c)" "$dev temperature (ethtool)"
  assert_eq 3.3120 "$(value_of "$e" voltage_v)" "$dev voltage (ethtool)"
  if degraded "$kind"; then
    assert_eq 0 "$(value_of "$p" lanes)" "$dev lanes through the ioctl (probe)"
    assert_eq 0 "$(grep -c '^lane[0-9]\|^threshold_' "$p")" "$dev lane/threshold lines through the ioctl (probe)"
  else
    assert_eq 0.8120 "$(value_of "$e" lane1_rx_power_mw)" "$dev lane 1 Rx power (ethtool)"
    assert_eq 0.4300 "$(value_of "$e" lane2_rx_power_mw)" "$dev lane 2 Rx power (ethtool)"
    assert_eq 0.7010 "$(value_of "$e" "lane${lanes}_tx_power_mw")" "$dev lane $lanes Tx power (ethtool)"
    assert_eq 6.110 "$(value_of "$e" lane1_tx_bias_ma)" "$dev lane 1 bias (ethtool)"
    assert_eq 7.020 "$(value_of "$e" lane2_tx_bias_ma)" "$dev lane 2 bias (ethtool)"
    assert_eq "$lanes" "$(value_of "$p" lanes)" "$dev lane count"
    assert_eq 1 "$(value_of "$p" lane3_rx_power_low_warning)" "$dev lane 3 Rx low warning (probe)"
    assert_eq 0 "$(value_of "$p" lane3_rx_power_low_alarm)" "$dev lane 3 Rx low alarm (probe)"
    for l in 1 2 4; do
      assert_eq 0 "$(value_of "$p" "lane${l}_rx_power_low_warning")" "$dev lane $l Rx low warning (probe)"
    done
    if [ "$kind" = sff8636 ]; then
      assert_eq 1 "$(value_of "$e" lane3_rx_power_low_warning)" "$dev lane 3 Rx low warning (ethtool)"
    fi
  fi

  # The bytes ethtool read decode to the same result as our own netlink reads.
  # shellcheck disable=SC2086
  dump_pages "$dev" "$TESTBED_WORK/$dev.pages" 00 $pages
  "$PROBE" --pages "$TESTBED_WORK/$dev.pages" >"$TESTBED_WORK/$dev.decoded" ||
    fail "transceiver_probe --pages $dev failed"
  if [ "$kind" = cmis ] && ! degraded "$kind"; then
    # CMIS page 11h byte 152: Rx power low warning, bit per lane; byte 150: low alarm.
    assert_eq 04 "$(od -An -tx1 -j 24 -N 1 "$TESTBED_WORK/$dev.pages/11" | tr -d ' ')" "$dev 11h:152"
    assert_eq 00 "$(od -An -tx1 -j 22 -N 1 "$TESTBED_WORK/$dev.pages/11" | tr -d ' ')" "$dev 11h:150"
  fi
  cmp -s "$TESTBED_WORK/$dev.probe" "$TESTBED_WORK/$dev.decoded" || {
    diff "$TESTBED_WORK/$dev.probe" "$TESTBED_WORK/$dev.decoded" | head -n 20 >&2
    fail "$dev: decode of ethtool's raw pages differs from the live read"
  }

  # The ioctl fallback (ETHTOOL_GMODULEEEPROM's flat image): the same QSFP28 decode (page 03h at
  # byte 512); for CMIS only lower page and 00h exist there, so identity and module monitors.
  "$PROBE" --ioctl "$dev" >"$TESTBED_WORK/$dev.ioctl" || fail "transceiver_probe --ioctl $dev failed"
  if [ "$kind" = sff8636 ]; then
    cmp -s "$TESTBED_WORK/$dev.probe" "$TESTBED_WORK/$dev.ioctl" || {
      diff "$TESTBED_WORK/$dev.probe" "$TESTBED_WORK/$dev.ioctl" | head -n 20 >&2
      fail "$dev: the ioctl read decodes differently from the netlink read"
    }
  else
    assert_eq 0 "$(value_of "$TESTBED_WORK/$dev.ioctl" lanes)" "$dev lanes through the ioctl"
    for k in serial_number firmware_version temperature_c voltage_v; do
      assert_eq "$(value_of "$p" $k)" "$(value_of "$TESTBED_WORK/$dev.ioctl" $k)" "$dev $k through the ioctl"
    done
  fi

  # Above the module's own high-alarm threshold: both raise the alarm, and it clears again.
  assert_eq 0 "$(value_of "$p" temperature_high_alarm)" "$dev temperature alarm before"
  simnic_ctl "$dev" "module temp $5"
  agree_with_ethtool "$dev" "$kind, hot" "$(min_keys "$kind" "$lanes")" "$kind"
  assert_eq 1 "$(value_of "$TESTBED_WORK/$dev.probe" temperature_high_alarm)" "$dev alarm (probe)"
  assert_eq 1 "$(value_of "$TESTBED_WORK/$dev.probe" temperature_high_warning)" "$dev warning (probe)"
  simnic_ctl "$dev" "module temp 41500"
  agree_with_ethtool "$dev" "$kind, cooled" "$(min_keys "$kind" "$lanes")" "$kind"
  assert_eq 0 "$(value_of "$TESTBED_WORK/$dev.probe" temperature_high_alarm)" "$dev alarm after"
}

port_of() { sed -n 's/^# simnic port \([0-9]*\) .*/\1/p' "$SIMNIC_DEBUGFS/$1/ctl"; }
sff='' cmis=
for dev in $(simnic_netdevs); do
  if [ $(($(port_of "$dev") % 2)) -eq 0 ]; then sff=${sff:-$dev}; else cmis=${cmis:-$dev}; fi
done
if [ -z "$sff" ] || [ -z "$cmis" ]; then
  fail "need two simnic ports (num_ports >= 2), got '$(simnic_netdevs)'"
fi

# Per-page reads (ETHTOOL_MSG_MODULE_EEPROM_GET) exist from 5.13: what ethtool can do must match the
# kernel version, and decides which behaviour is asserted.
kernel=$(uname -r)
kv=$(echo "$kernel" | awk -F'[.-]' '{ print $1 * 1000 + $2 }')
if ethtool -m "$sff" raw on offset 128 length 128 page 0x03 >/dev/null 2>&1; then access=netlink; else access=ioctl; fi
if [ "$kv" -lt 5013 ]; then want=ioctl; else want=netlink; fi
assert_eq "$want" "$access" "module EEPROM access on $kernel (ethtool -m ... page 0x03)"
log "kernel $kernel: module EEPROM through $access"

check_module "$sff" sff8636 4 "03" 76000
check_module "$cmis" cmis 8 "01 02 10 11" 81000

# Input validation of the control command (the whole write is refused).
for bad in "module temp 200000" "module rx_power 9 100" "module rx_power 0 100" "module bias all -1" \
  "module vcc" "module volume 3"; do
  printf '%s\n' "$bad" >"$SIMNIC_DEBUGFS/$sff/ctl" 2>/dev/null && fail "'$bad' was accepted"
done
# A QSFP28 has 4 lanes: lane 5 exists only on the CMIS module.
printf 'module rx_power 5 100\n' >"$SIMNIC_DEBUGFS/$sff/ctl" 2>/dev/null && fail "lane 5 on a QSFP28 accepted"
simnic_ctl "$cmis" "module rx_power 5 100"

# ---- the exporter's series against ethtool -m ----------------------------------------------------
require exporter
# /metrics of one netdev in ethtool_kv's key names and units (W -> mW, A -> mA).
metrics_kv() { # FILE NETDEV
  for m in roce_transceiver_temperature_celsius roce_transceiver_supply_voltage_volts \
    roce_transceiver_rx_power_watts roce_transceiver_tx_power_watts roce_transceiver_tx_bias_amperes \
    roce_transceiver_flag roce_transceiver_threshold roce_transceiver_info; do
    _series_matching "$1" "$m" "netdev=$2" | sed "s/^/$m /"
  done | awk '
    function lbl(name,   i, kv) {
      for (i = 1; i <= n; i++) { split(parts[i], kv, "="); if (kv[1] == name) return substr(parts[i], length(name) + 2) }
      return ""
    }
    function base(mon) {
      return mon == "temperature" ? "temperature_c" : mon == "supply_voltage" ? "voltage_v" :
        mon == "tx_bias" ? "tx_bias_ma" : mon "_mw"
    }
    function scale(mon) { return (mon == "rx_power" || mon == "tx_power" || mon == "tx_bias") ? 1000 : 1 }
    {
      name = $1; value = $NF
      labels = substr($0, length(name) + 2); labels = substr(labels, 1, length(labels) - length(value) - 1)
      n = split(labels, parts, ",")
      lane = lbl("lane"); mon = lbl("monitor"); kind = lbl("kind")
      if (name == "roce_transceiver_info") {
        print "vendor_name=" lbl("vendor"); print "part_number=" lbl("part_number")
        print "revision=" lbl("revision"); print "serial_number=" lbl("serial")
      } else if (name == "roce_transceiver_temperature_celsius") print "temperature_c=" value
      else if (name == "roce_transceiver_supply_voltage_volts") print "voltage_v=" value
      else if (name == "roce_transceiver_rx_power_watts") print "lane" lane "_rx_power_mw=" value * 1000
      else if (name == "roce_transceiver_tx_power_watts") print "lane" lane "_tx_power_mw=" value * 1000
      else if (name == "roce_transceiver_tx_bias_amperes") print "lane" lane "_tx_bias_ma=" value * 1000
      else if (name == "roce_transceiver_threshold") print "threshold_" base(mon) "_" kind "=" value * scale(mon)
      else if (name == "roce_transceiver_flag") {
        f = mon == "supply_voltage" ? "voltage" : mon
        print (lane == "" ? "" : "lane" lane "_") f "_" kind "=" value
      }
    }' | sort
}

# Every key of $TESTBED_WORK/IFNAME.ethtool (ethtool_kv, refreshed by agree_with_ethtool) equals the
# exporter's series: text exactly, numbers within half a unit of ethtool's last printed digit.
exporter_agrees() { # METRICS_FILE IFNAME LABEL
  metrics_kv "$1" "$2" >"$TESTBED_WORK/$2.exporter"
  awk -F= '
    NR == FNR { m[$1] = substr($0, length($1) + 2); next }
    {
      k = $1; v = substr($0, length(k) + 2); n++
      # A clear flag has no series (metrics_transceiver.cc): ethtool Off = absent.
      if (!(k in m) && k !~ /^threshold_/ && k ~ /_(high|low)_(alarm|warning)$/ && v == "0") next
      if (!(k in m)) { print k ": ethtool " v ", no series"; bad++; next }
      if (v ~ /^-?[0-9]+(\.[0-9]+)?$/) {
        d = index(v, ".") ? length(v) - index(v, ".") : 0
        tol = 0.5; for (i = 0; i < d; i++) tol /= 10  # busybox awk: no ^ without math support
        tol += 1e-9; diff = m[k] - v; if (diff < 0) diff = -diff
        if (diff > tol) { print k ": ethtool " v ", exporter " m[k]; bad++ }
      } else if (m[k] != v) { print k ": ethtool " v ", exporter " m[k]; bad++ }
    }
    END { print "compared " n; exit bad > 0 }' "$TESTBED_WORK/$2.exporter" "$TESTBED_WORK/$2.ethtool" \
    >"$TESTBED_WORK/$2.compare" || {
    cat "$TESTBED_WORK/$2.compare" >&2
    fail "$2 ($3): the exporter's series differ from ethtool -m"
  }
  log "$2 ($3): exporter agrees with ethtool -m on $(sed -n 's/^compared //p' "$TESTBED_WORK/$2.compare") values"
}

# /metrics reduced to the transceiver families: the guest's busybox awk parses every line of the
# file at each lookup, and the scenario polls.
scrape_xcvr() { # FILE
  scrape "$1.all"
  grep -E '^roce_(transceiver_|exporter_transceiver_)' "$1.all" >"$1" || true
}
# The value of one roce_transceiver_* series now (empty when it does not exist).
xcvr_now() { # NAME label=value...
  scrape_xcvr "$TESTBED_WORK/xcvr.txt"
  metric_from "$TESTBED_WORK/xcvr.txt" "$@" || true
}
xcvr_is() { # WANT NAME label=value...
  _want=$1
  shift
  num_eq "$_want" "$(xcvr_now "$@")"
}
# xcvr_is, and when the value is not there yet, the time of the snapshot that lacked it (the
# exporter's clock) in $stale_at; a scrape without that time (a failed one) keeps the last.
xcvr_shows_change() { # WANT NAME label=value...
  xcvr_is "$@" && return 0
  _taken=$(metric_from "$TESTBED_WORK/xcvr.txt.all" roce_exporter_last_sample_timestamp_seconds) &&
    stale_at=$_taken
  return 1
}
# Within 1e-9 W (the exposition prints doubles: 9000 x 0.1 uW may print as 0.00090000000000000008).
xcvr_near() { # WANT NAME label=value...
  _want=$1
  shift
  awk -v a="$_want" -v b="$(xcvr_now "$@")" 'BEGIN { d = a - b; exit !(b != "" && d < 1e-9 && d > -1e-9) }'
}
xcvr_absent() { [ -z "$(xcvr_now "$@")" ]; }
temp_alarm() { # IFNAME
  echo "netdev=$1 monitor=temperature lane= kind=high_alarm"
}

for dev in "$sff" "$cmis"; do
  simnic_ctl "$dev" "module temp 41500; module rx_power all 812; module rx_power 2 430; module rx_power 3 50"
done
start_exporter --transceiver.interval=1s --transceiver.serial \
  "--collector.device-include=$sff|$cmis"
wait_for 10 xcvr_is 1 roce_exporter_transceiver_interval_seconds ||
  fail "no roce_exporter_transceiver_interval_seconds 1 after 10 s"
for pair in "$sff:sff8636:4" "$cmis:cmis:8"; do
  dev=${pair%%:*} kind=${pair#*:} lanes=${kind#*:} kind=${kind%:*}
  wait_for 10 xcvr_is 41.5 roce_transceiver_temperature_celsius "netdev=$dev" ||
    fail "$dev: no roce_transceiver_temperature_celsius 41.5 within 10 s"
  agree_with_ethtool "$dev" "$kind, exporter" "$(min_keys "$kind" "$lanes")" "$kind"
  scrape_xcvr "$TESTBED_WORK/xcvr.txt"
  exporter_agrees "$TESTBED_WORK/xcvr.txt" "$dev" "$kind"
  assert_eq "$kind" "$(metric_label "$TESTBED_WORK/xcvr.txt" roce_transceiver_info spec "netdev=$dev")" "$dev spec label"
  # Which interface read the module, and what it could not read.
  assert_eq "$access" "$(metric_label "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_access_info method "netdev=$dev")" "$dev access method"
  if degraded "$kind"; then unread='01h 02h 11h'; else unread=; fi
  assert_eq 1 "$(metric_from "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_access_info "netdev=$dev" "method=$access" "unread_pages=$unread")" "$dev access_info{unread_pages=\"$unread\"}"
  if degraded "$kind"; then
    # Module level only: no lane, lane flag or threshold series, and the exporter said why.
    for m in roce_transceiver_rx_power_watts roce_transceiver_tx_power_watts roce_transceiver_tx_bias_amperes roce_transceiver_threshold; do
      assert_eq 0 "$(_series_matching "$TESTBED_WORK/xcvr.txt" "$m" "netdev=$dev" | wc -l)" "$dev $m series through the ioctl"
    done
    assert_eq 0 "$(_series_matching "$TESTBED_WORK/xcvr.txt" roce_transceiver_flag "netdev=$dev" | grep -vc 'lane=,')" "$dev lane flag series through the ioctl"
    grep 'msg="transceiver via ioctl"' "$EXPORTER_LOG" | grep "netdev=$dev " | grep -q 'unread_pages="01h 02h 11h"' ||
      fail "$dev: no log line msg=\"transceiver via ioctl\" with its unread pages ($(grep -c 'transceiver via ioctl' "$EXPORTER_LOG") such lines)"
    log "$dev: $(grep 'msg="transceiver via ioctl"' "$EXPORTER_LOG" | grep "netdev=$dev " | sed 's/^ts=[^ ]* //')"
  else
    assert_eq "$lanes" "$(_series_matching "$TESTBED_WORK/xcvr.txt" roce_transceiver_rx_power_watts "netdev=$dev" | wc -l)" "$dev Rx power lanes"
    # CMIS lane flags: ethtool 6.1 misprints them (see agree_with_ethtool); page 11h byte 152 (checked
    # above from ethtool's raw dump) has lane 3's Rx low-warning bit.
    assert_eq 1 "$(metric_from "$TESTBED_WORK/xcvr.txt" roce_transceiver_flag "netdev=$dev" monitor=rx_power lane=3 kind=low_warning)" "$dev lane 3 Rx low warning (exporter)"
    assert_eq "" "$(metric_from "$TESTBED_WORK/xcvr.txt" roce_transceiver_flag "netdev=$dev" monitor=rx_power lane=1 kind=low_warning || true)" "$dev lane 1 Rx low warning clear: no series (exporter)"
  fi

  # A change through simnic reaches the next snapshot after the poller's next round, timed on the
  # exporter's clock: every snapshot /metrics served without the change was taken (its
  # roce_exporter_last_sample_timestamp_seconds) before the change was made + one interval (the
  # fixed-rate poller's next round starts by then) + one round (roce_exporter_transceiver_round_
  # duration_seconds) + 1 s for the guest's threads. This guest's /metrics polling, slow under load,
  # and the sampler's period (which backs off under load, to 4 s) only delay when the test looks.
  t0=$(now_s)
  simnic_ctl "$dev" "module temp 55250; module rx_power 1 900"
  stale_at=
  wait_for 15 xcvr_shows_change 55.25 roce_transceiver_temperature_celsius "netdev=$dev" ||
    fail "$dev: temperature 55.25 not in /metrics within 15 s (now '$(xcvr_now roce_transceiver_temperature_celsius "netdev=$dev")')"
  if ! degraded "$kind"; then
    wait_for 2 xcvr_near 0.0009 roce_transceiver_rx_power_watts "netdev=$dev" lane=1 ||
      fail "$dev: lane 1 Rx power 0.9 mW not in /metrics"
  fi
  round=$(metric_from "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_round_duration_seconds)
  if [ -n "$stale_at" ]; then
    late=$(awk -v a="$t0" -v b="$stale_at" 'BEGIN { printf "%.2f", b - a }')
    log "$dev: the last snapshot without the change was taken ${late}s after it (round ${round}s, interval 1s)"
    awk -v l="$late" -v r="$round" 'BEGIN { exit !(l <= 1 + r + 1) }' ||
      fail "$dev: a snapshot taken ${late}s after the change still lacked it: more than one interval + one round (${round}s) + 1 s"
  else
    log "$dev: the first scrape after the change showed it"
  fi

  # Above the module's own high-alarm threshold: the flag series appears at 1, and goes when clear.
  # shellcheck disable=SC2046
  assert_eq "" "$(xcvr_now roce_transceiver_flag $(temp_alarm "$dev"))" "$dev alarm flag before (no series)"
  [ "$kind" = sff8636 ] && hot=76000 || hot=81000
  simnic_ctl "$dev" "module temp $hot"
  # shellcheck disable=SC2046
  wait_for 5 xcvr_is 1 roce_transceiver_flag $(temp_alarm "$dev") ||
    fail "$dev: temperature high_alarm flag not 1 within 5 s of $hot m°C"
  agree_with_ethtool "$dev" "$kind, hot, exporter" "$(min_keys "$kind" "$lanes")" "$kind"
  scrape_xcvr "$TESTBED_WORK/xcvr.txt"
  exporter_agrees "$TESTBED_WORK/xcvr.txt" "$dev" "$kind, hot"
  simnic_ctl "$dev" "module temp 41500"
  # shellcheck disable=SC2046
  wait_for 5 xcvr_absent roce_transceiver_flag $(temp_alarm "$dev") ||
    fail "$dev: temperature high_alarm flag still set 5 s after cooling"
done
# The read cost is counted: at least one read per netdev per round, no failures.
scrape_xcvr "$TESTBED_WORK/xcvr.txt"
reads=$(metric_from "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_reads_total)
awk -v r="$reads" 'BEGIN { exit !(r >= 4) }' || fail "roce_exporter_transceiver_reads_total is '$reads'"
errors=$(metric_series "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_read_errors_total | awk '{ s += $NF } END { print s + 0 }')
assert_eq 0 "$errors" "transceiver read errors"
for dev in "$sff" "$cmis"; do
  d=$(metric_from "$TESTBED_WORK/xcvr.txt" roce_exporter_transceiver_read_duration_seconds "netdev=$dev")
  log "$dev: one module read took ${d}s"
  # The fallback is logged once per netdev over all these rounds (reads_total above), never with
  # netlink.
  if [ "$access" = ioctl ]; then once=1; else once=0; fi
  assert_eq "$once" "$(grep 'msg="transceiver via ioctl"' "$EXPORTER_LOG" | grep -c "netdev=$dev ")" "$dev: 'transceiver via ioctl' log lines after $reads reads"
done
stop_exporter
