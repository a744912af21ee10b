# shellcheck shell=sh
# Guest script (tests/testbed/run --script bench/testbed_8nic_run.sh): the exporter's CPU and RSS at
# the default flags with 8 simulated ConnectX ports (8 netdevs, 8 RDMA devices) carrying
# traffic, PFC pauses and ECN/CNP activity. Prints MEASURE lines; fails if the exporter died, if it
# did not report all 8 ports, or if no samples were taken.
# NIC8_WORKLOADS=1 (bench/testbed_fleet_series.sh): also 8 GPUs on the PCIe bus and one training
# pod using every port and GPU, named by attribution (docs/attribution.md): a Soft-RoCE device
# over each port with one QP of the pod on it, the fake kubelet allocating it the 8 GPUs.
require exporter simnic
if [ "${NIC8_WORKLOADS:-0}" = 1 ]; then
  require rxe
  simnic_load_ports 8 gpus=8
else
  simnic_load_ports 8
fi
for n in $(simnic_netdevs); do
  simnic_ctl "$n" 'traffic 3 rx 20000; traffic 3 tx 20000; rate rx_prio3_pause 50; rate rx_prio3_pause_duration 2000; rate np_ecn_marked_roce_packets 400; rate np_cnp_sent 300'
done
if [ "${NIC8_WORKLOADS:-0}" = 1 ]; then
  uid=6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c11
  cg=$(workload_pod_cgroup ml trainer-0 "$uid")
  i=0
  for n in $(simnic_netdevs); do
    workload_rxe "$n" "192.168.$((90 + i)).1" "rxw$i"
    workload_qps "$cg" "rxw$i" "$((7100 + i))" pod
    i=$((i + 1))
  done
  { printf '%s\n' 'pods:' '- namespace: ml' '  name: trainer-0' '  containers:' '  - name: trainer' \
      '    devices:' '    - resource: nvidia.com/gpu' '      ids:'
    for g in 0 1 2 3 4 5 6 7; do echo "        - GPU-6f1c2a4e-0d5b-4c1e-9a57-3b8f0e2d7c1$g"; done; } >/run/nic8-pods.yaml
  /testbed/bin/fake_kubelet --socket /run/nic8-kubelet.sock --pods /run/nic8-pods.yaml >/run/nic8-kubelet.log 2>&1 &
  wait_for 10 test -S /run/nic8-kubelet.sock || fail "fake kubelet: $(cat /run/nic8-kubelet.log)"
  start_exporter --attribution.interval=15s --attribution.kubelet-socket=/run/nic8-kubelet.sock
else
  start_exporter
fi
pid=$(_exporter_pid)
ports() { wget -qO- "$EXPORTER_URL/metrics" | grep -c '^roce_device_info{'; }
wait_for 20 sh -c "[ \$(wget -qO- $EXPORTER_URL/metrics | grep -c '^roce_device_info{') -ge 8 ]" || fail "exporter reports $(ports) RDMA ports, expected 8"
devices=$(ports)
# NIC8_SETUP_ONLY=1 (bench/testbed_fleet_series.sh through guest-exec): leave the 8 ports and the
# exporter running for the host and stop here.
if [ "${NIC8_SETUP_ONLY:-0}" = 1 ]; then
  echo "SETUP ports=$devices"
  exit 0
fi
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
t0=$(awk '{print $14 + $15}' /proc/"$pid"/stat)
s0=$(cut -d' ' -f1 /proc/uptime)
# The measurement window itself, not synchronisation: 60 s with a Prometheus-like scraper (one
# gzip scrape every 15 s, a new connection each), so renders and compression are in the figure.
scrapes=0
while [ "$scrapes" -lt 4 ]; do
  sleep 15
  wget -q --header 'Accept-Encoding: gzip' -O /dev/null "$EXPORTER_URL/metrics" || fail "scrape failed"
  scrapes=$((scrapes + 1))
done
t1=$(awk '{print $14 + $15}' /proc/"$pid"/stat)
s1=$(cut -d' ' -f1 /proc/uptime)
kill -0 "$pid" || fail "exporter died during the run"
rss=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/"$pid"/status)
cpu=$(awk -v a="$t0" -v b="$t1" -v s="$s0" -v e="$s1" -v hz="$hz" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / (e - s) }')
# Where it went: user and system ticks since start of each named thread that used any
# (docs/operations.md "Which thread uses the CPU"); comm holds no space, so the fields count.
for task in /proc/"$pid"/task/*; do
  awk -v name="$(cat "$task/comm")" '$14 + $15 > 0 { print "THREAD " name " user_ticks=" $14 " system_ticks=" $15 }' "$task/stat"
done
echo "MEASURE ports=$devices window_s=60 scrapes=$scrapes cpu_percent_of_one_core=$cpu rss_kib=$rss rss_peak_kib=$hwm"
