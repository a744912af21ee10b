# shellcheck shell=sh
# The QoS state the exporter reports equals what the real iproute2 `dcb` reads from the simulated
# ConnectX (pfc, ets, app, buffer, maxrate, dcbx), across configurations made with `dcb` (which
# notify) and made behind the host's back through the simnic control file (which do not: the
# exporter's poll must catch them).
require exporter simnic
sim=$(simnic_netdevs | head -n1)

# One "what value" line per state item, from `dcb -j` (the independent oracle).
jarr() { echo "$2" | sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" | tr ',' ' ' | tr -d '"'; }
jnum() { echo "$2" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
dcb_state() {
  pfc=$(dcb -j pfc show dev "$1") && ets=$(dcb -j ets show dev "$1") &&
    buf=$(dcb -j buffer show dev "$1") && rate=$(dcb -j maxrate show dev "$1") &&
    dcbx=$(dcb -j dcbx show dev "$1") && app=$(dcb -N app show dev "$1") || return 1
  i=0; for v in $(jarr prio_pfc "$pfc"); do [ "$v" = true ] && v=1 || v=0; echo "pfc $i $v"; i=$((i + 1)); done
  echo "delay $(jnum delay "$pfc")"
  i=0; for v in $(jarr prio_tc "$ets"); do echo "prio_tc $i $v"; i=$((i + 1)); done
  i=0; for v in $(jarr tc_tsa "$ets"); do echo "tsa $i $v"; i=$((i + 1)); done
  i=0; for v in $(jarr tc_bw "$ets"); do echo "bw $i $v"; i=$((i + 1)); done
  i=0; for v in $(jarr prio_buffer "$buf"); do echo "prio_buffer $i $v"; i=$((i + 1)); done
  i=0; for v in $(jarr buffer_size "$buf"); do echo "buffer_size $i $v"; i=$((i + 1)); done
  echo "total $(jnum total_size "$buf")"
  i=0; for v in $(jarr tc_maxrate "$rate"); do echo "maxrate_kbps $i $v"; i=$((i + 1)); done
  case $dcbx in *'"host":true'*) echo "dcbx host" ;; *) echo "dcbx firmware" ;; esac
  trust=pcp
  for pair in $(echo "$app" | sed -n 's/^dscp-prio //p'); do
    echo "dscp ${pair%%:*} ${pair##*:}"
    trust=dscp
  done
  echo "trust $trust"
}

# The same lines from one scrape of the exporter.
exported_state() {
  scrape "$TESTBED_WORK/state.txt"
  _metric_lines "$TESTBED_WORK/state.txt" | awk -v dev="$1" "$_AWK_LABELS"'
    L["netdev"] != dev { next }
    $1 == "roce_qos_pfc_enabled" { print "pfc", L["prio"], $NF }
    $1 == "roce_qos_pfc_cable_length_meters" { print "delay", $NF }
    $1 == "roce_qos_prio_tc" { print "prio_tc", L["prio"], $NF }
    $1 == "roce_qos_ets_tsa" && $NF == 1 { print "tsa", L["tc"], L["tsa"] }
    $1 == "roce_qos_ets_bandwidth_ratio" { printf "bw %s %d\n", L["tc"], $NF * 100 + 0.5 }
    $1 == "roce_qos_prio_buffer" { print "prio_buffer", L["prio"], $NF }
    $1 == "roce_qos_buffer_size_bytes" { print "buffer_size", L["buffer"], $NF }
    $1 == "roce_qos_buffer_total_bytes" { print "total", $NF }
    $1 == "roce_qos_maxrate_bytes_per_second" { printf "maxrate_kbps %s %.0f\n", L["tc"], $NF * 8 / 1000 }
    $1 == "roce_qos_dcbx_mode" && $NF == 1 { print "dcbx", L["mode"] }
    $1 == "roce_qos_dscp_prio" { print "dscp", L["dscp"], $NF }
    $1 == "roce_qos_trust" && $NF == 1 { print "trust", L["mode"] }'
}

same_state() {
  dcb_state "$sim" | sort >"$TESTBED_WORK/want.txt" || return 1
  exported_state "$sim" | sort >"$TESTBED_WORK/got.txt"
  cmp -s "$TESTBED_WORK/want.txt" "$TESTBED_WORK/got.txt"
}
expect_same() {  # what
  if ! wait_for 10 same_state; then
    diff "$TESTBED_WORK/want.txt" "$TESTBED_WORK/got.txt" >&2
    fail "$1: the exporter's QoS state differs from dcb (- dcb, + exporter)"
  fi
  log "$1: $(wc -l <"$TESTBED_WORK/want.txt") state items equal to dcb"
}

start_exporter --qos.poll-interval=1s --qos.dcqcn-poll-interval=1s

# 1. As loaded: PCP trust, no PFC, mlx5's initial ETS (all vendor, prio 0 <-> 1), one buffer.
expect_same "as loaded"
assert_eq 0 "$(grep -c '^dscp ' "$TESTBED_WORK/got.txt")" "DSCP entries as loaded"

# 2. A lossless RoCE setup made with dcb (each set notifies RTNLGRP_DCB).
dcb pfc set dev "$sim" prio-pfc all:off 3:on 5:on
dcb app add dev "$sim" dscp-prio 24:3 26:3 40:5 48:6
dcb ets set dev "$sim" tc-tsa 0:ets 1:ets 2:strict 3:strict 4:strict 5:strict 6:strict 7:strict \
  tc-bw 0:60 1:40 2:0 3:0 4:0 5:0 6:0 7:0 prio-tc 0:0 1:1 2:2 3:1 4:2 5:1 6:2 7:2
dcb buffer set dev "$sim" prio-buffer all:0 3:1 5:1 buffer-size 0:130944 1:130944
dcb dcbx set dev "$sim" host ieee
expect_same "configured with dcb"
assert_eq "dscp 26 3" "$(grep '^dscp 26 ' "$TESTBED_WORK/got.txt")"
assert_eq "trust dscp" "$(grep '^trust ' "$TESTBED_WORK/got.txt")"

# 3. Behind the host's back (firmware, DCBX peer): no notification, the 1 s poll must catch it.
seq_before=$(simnic_dcb_event_seq "$sim")
simnic_ctl "$sim" "maxrate 3 25000000; cable_len 30; pfc 0x20; ets prio_tc 0,1,2,3,4,5,6,7; app del 40; dcbx fw"
simnic_ctl "$sim" "buffer prio2buffer 0 0 0 0 0 1 0 0"
assert_eq "$seq_before" "$(simnic_dcb_event_seq "$sim")" "control-file changes must not notify"
expect_same "changed through the control file"
assert_eq "maxrate_kbps 3 25000000" "$(grep '^maxrate_kbps 3 ' "$TESTBED_WORK/got.txt")"
assert_eq "dcbx firmware" "$(grep '^dcbx ' "$TESTBED_WORK/got.txt")"

# 4. Back to PCP trust: every DSCP entry deleted with dcb.
dcb app del dev "$sim" dscp-prio 24:3 26:3 48:6
expect_same "DSCP entries deleted"
assert_eq "trust pcp" "$(grep '^trust ' "$TESTBED_WORK/got.txt")"

# The host sources: ECN enables, CNP settings, ToS, tcp_ecn, PFC storm prevention timeout.
echo 0 >/sys/class/net/"$sim"/ecn/roce_rp/enable/6
echo 106 >/sys/class/infiniband/mlx5_0/tc/1/traffic_class
ethtool --set-tunable "$sim" pfc-prevention-tout 100
sysctl -qw net.ipv4.tcp_ecn=1
host_ok() {
  scrape "$TESTBED_WORK/host.txt"
  num_eq 0 "$(metric_from "$TESTBED_WORK/host.txt" roce_qos_dcqcn_enabled netdev="$sim" prio=6 role=rp)" &&
    num_eq 1 "$(metric_from "$TESTBED_WORK/host.txt" roce_qos_dcqcn_enabled netdev="$sim" prio=6 role=np)" &&
    num_eq "$(cat /sys/class/net/"$sim"/ecn/roce_np/cnp_dscp)" "$(metric_from "$TESTBED_WORK/host.txt" roce_qos_cnp_dscp netdev="$sim")" &&
    num_eq 106 "$(metric_from "$TESTBED_WORK/host.txt" roce_qos_roce_tos device=mlx5_0 port=1)" &&
    num_eq 0.1 "$(metric_from "$TESTBED_WORK/host.txt" roce_qos_pfc_storm_prevention_timeout_seconds netdev="$sim" mode=fixed)" &&
    num_eq 1 "$(awk '$1 == "roce_qos_tcp_ecn" { print $2 }' "$TESTBED_WORK/host.txt")"
}
wait_for 10 host_ok ||
  fail "host sources differ: $(grep -E '^roce_qos_(dcqcn_enabled.*prio="6"|cnp_dscp|roce_tos|pfc_storm|tcp_ecn)' "$TESTBED_WORK/host.txt")"
assert_no_negative "$TESTBED_WORK/host.txt"
exporter_alive
stop_exporter
