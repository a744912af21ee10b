#!/usr/bin/env bash
# The GPU topology as the built exporter serves it (docs/gpus.md): in a private network and mount
# namespace, each machine of tests/fixtures/gpu_topology is bind-mounted over /sys and veths named
# as its NICs are selected; every roce_nic_gpu_topology series and every NUMA node on /metrics
# equals the machine's expected.txt (its `nvidia-smi topo -m` NIC rows), and
# --gpu-topology.nearest-only keeps each NIC's nearest GPUs only. The unit tests check the poller
# and the render; this checks the wiring in main.cc (flag, poller, the snapshot's attach hook).
# Usage: gpu_topology_fixture.sh path/to/roce_qos_exporter
set -euo pipefail
source "$(dirname "$0")/../common.bash"
fixtures=$root/tests/fixtures/gpu_topology

# Inside the namespaces (the script runs itself under unshare): --inside EXE MACHINE OUT [FLAG...].
# `ip netns exec` would mount the namespace's own /sys over the fixture, hence unshare.
if [[ ${1:-} == --inside ]]; then
  exe=$2 machine=$3 out=$4
  shift 4
  ip link set lo up
  i=0
  while read -r netdev; do
    i=$((i + 1))
    ip link add "$netdev" type veth peer name "rqpeer$i"
    ip link set "$netdev" up
  done < <(awk '!/^#/ && NF && $1 != "gpus" && $1 != "gpu_numa" {print $1}' \
    "$fixtures/$machine/expected.txt")
  mount --bind "$fixtures/$machine/sys" /sys
  # --pcie.interval=1s: the round after the first discovery reads the selected NICs' topology.
  "$exe" --web.listen-address=127.0.0.1:9879 --collector.device-include='enp.*' \
    --pcie.interval=1s "$@" >"$out.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
  has_pairs() { curl -sf 127.0.0.1:9879/metrics -o "$out" && grep -q '^roce_nic_numa_node{' "$out"; }
  wait_for 20 "roce_nic_numa_node on /metrics" has_pairs
  exit 0
fi

exe=$(realpath "${1:?usage: $0 path/to/roce_qos_exporter}")
require_tools curl ip unshare awk
[[ $(id -u) -eq 0 ]] || skip "needs root for network and mount namespaces"
unshare -n -m true 2>/dev/null || skip "cannot create network and mount namespaces here"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# expected.txt as exposition lines: the pairs, then the NUMA nodes (-1: unknown, no series).
expected_pairs() {
  awk '/^#/ || !NF {next} $1 == "gpus" {for (i = 2; i <= NF; i++) gpu[i - 1] = $i; next}
       $1 == "gpu_numa" {next}
       {for (i = 3; i <= NF; i++)
          printf "roce_nic_gpu_topology{netdev=\"%s\",gpu_pci_bus_id=\"%s\",relation=\"%s\"} 1\n",
                 $1, gpu[i - 2], $i}' "$1" | sort
}
expected_numa() {
  awk '/^#/ || !NF {next} $1 == "gpus" {for (i = 2; i <= NF; i++) gpu[i - 1] = $i; next}
       $1 == "gpu_numa" {for (i = 2; i <= NF; i++) if ($i >= 0)
                           printf "roce_gpu_numa_node{gpu_pci_bus_id=\"%s\"} %s\n", gpu[i - 1], $i
                         next}
       $2 >= 0 {printf "roce_nic_numa_node{netdev=\"%s\"} %s\n", $1, $2}' "$1" | sort
}
# Per NIC, the pairs of its nearest relation (nvidia-smi's order: PIX, PXB, PHB, NODE, SYS).
nearest_pairs() {
  awk -F'"' 'BEGIN {n = split("PIX PXB PHB NODE SYS", order, " "); for (k = 1; k <= n; k++) rank[order[k]] = k}
             {line[NR] = $0; nic[NR] = $2; r[NR] = rank[$6]
              if (!($2 in best) || r[NR] < best[$2]) best[$2] = r[NR]}
             END {for (n = 1; n <= NR; n++) if (r[n] == best[nic[n]]) print line[n]}' | sort
}
served() { grep -E "^roce_($1)[{]" "$2" | sort; }

for dir in "$fixtures"/*/; do
  machine=$(basename "$dir")
  [[ -f $dir/expected.txt ]] || continue
  out=$work/$machine.metrics
  if ! unshare -n -m bash "$0" --inside "$exe" "$machine" "$out"; then
    fail "$machine: no topology on /metrics: $(tail -n 5 "$out.log" 2>/dev/null)"
    continue
  fi
  if diff <(expected_pairs "$dir/expected.txt") <(served nic_gpu_topology "$out") >"$work/d"; then
    pass "$machine: $(served nic_gpu_topology "$out" | wc -l) roce_nic_gpu_topology series, each as expected.txt"
  else
    fail "$machine: roce_nic_gpu_topology differs from expected.txt: $(head -n 6 "$work/d")"
  fi
  if diff <(expected_numa "$dir/expected.txt") <(served 'nic_numa_node|gpu_numa_node' "$out") >"$work/d"; then
    pass "$machine: every NIC's and GPU's NUMA node"
  else
    fail "$machine: NUMA nodes differ from expected.txt: $(head -n 6 "$work/d")"
  fi
  unshare -n -m bash "$0" --inside "$exe" "$machine" "$out.nearest" --gpu-topology.nearest-only ||
    { fail "$machine --gpu-topology.nearest-only: no topology on /metrics"; continue; }
  if diff <(expected_pairs "$dir/expected.txt" | nearest_pairs) \
    <(served nic_gpu_topology "$out.nearest") >"$work/d"; then
    pass "$machine --gpu-topology.nearest-only: $(served nic_gpu_topology "$out.nearest" | wc -l) series, each NIC's nearest"
  else
    fail "$machine --gpu-topology.nearest-only: differs: $(head -n 6 "$work/d")"
  fi
done
finish gpu_topology_fixture
