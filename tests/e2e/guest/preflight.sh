# Guest-side preflight of the end-to-end run (tests/e2e/run): the exporter and simnic exist, and
# the exporter publishes the families the alert rules read. The alerting itself runs on the host
# (tests/e2e/alerting.sh) once this passed.
require exporter simnic
sim=$(simnic_netdevs | head -n1)
dcb pfc set dev "$sim" prio-pfc all:off 3:on
start_exporter --sampler.period=250ms
f=$TESTBED_WORK/metrics.prom
has_storm_series() { scrape "$f" && metric_from "$f" roce_pfc_storm netdev="$sim" prio=3 direction=rx >/dev/null; }
wait_for 10 has_storm_series || fail "no roce_pfc_storm series for $sim prio 3 (signals not integrated?)"
for family in roce_pfc_storms_total roce_pfc_paused_ratio roce_pfc_pause_rate_peak; do
  [ "$(series_count "$f" "^$family\{")" -gt 0 ] || fail "no $family series"
done
assert_no_negative "$f"
stop_exporter
# dashboards-testbed.sh runs the guest's lldpd on this port (the LLDP layer rides in because this
# script calls start_lldpd): it must manage the port.
start_lldpd -r "$sim"
stop_lldpd
