# shellcheck shell=sh
# Guest script (tests/testbed/run --script bench/testbed_read_cost.sh): what one statistics read
# of a simnic port costs the exporter, at simnic firmware latencies of 0, 2000 and 500 us. 8 idle
# ports, every port read every 250 ms (--sampler.idle-period=0), the QoS engine's polls off, so
# the exported kernel duty cycle (last 10 s) is 8 reads per period: one read = duty x period / 8.
# The gap between the 0 and 2000 rows is the sleep as the exporter sees it, the 0 row the
# emulated ioctl itself. Prints MEASURE lines. Figures: docs/performance.md "Sampling cost".
require exporter simnic
simnic_load_ports 8
for n in $(simnic_netdevs); do simnic_ctl "$n" 'rate * 0'; done
start_exporter --sampler.idle-period=0 --qos.poll-interval=1h --qos.dcqcn-poll-interval=1h
wait_for 20 sh -c "[ \$(wget -qO- $EXPORTER_URL/metrics | grep -c '^roce_device_info{.*netdev=\"sim') -ge 8 ]" || fail "the exporter does not report 8 simnic ports"
for us in 0 2000 0 2000 500; do
  for n in $(simnic_netdevs); do simnic_ctl "$n" "fw_latency stats $us"; done
  # The duty cycle covers the last 10 s: a measurement window, not synchronisation.
  sleep 14
  d=$(metric roce_exporter_kernel_duty_cycle_ratio) || fail "no duty cycle"
  p=$(metric roce_exporter_sample_period_seconds) || fail "no sample period"
  echo "MEASURE fw_us=$us duty=$d period_s=$p read_us=$(awk -v d="$d" -v p="$p" 'BEGIN { printf "%.0f", d * p / 8 * 1e6 }')"
done
