#pragma once

// A fleet of N fake mlx5 devices for the sampler and render benchmarks: each netdev carries
// capture 24's real 751-name `ethtool -S` set (ConnectX-4 Lx, upstream mlx5,
// docs/kernel-interfaces.md §3) with PFC counters added for priority 3, and one RDMA port with the
// mlx5 hw counter names of docs/kernel-interfaces.md §5.7. Sources are the unit tests' fakes: no
// kernel, so the figures are the exporter's own cost.

#include <memory>
#include <string>
#include <vector>

#include "collectors/ethtool_map.h"
#include "exporter/sampling/sampler.h"
#include "tests/unit/support/ethtool_capture.h"
#include "tests/unit/support/fake_sources.h"

namespace roceqos::bench {

inline std::vector<std::string> Mlx5Names() {
  std::vector<std::string> names;
  const std::string text = testing::ReadCapture("24_");
  std::vector<testing::EthtoolBlock> blocks = testing::ParseEthtoolStats(text);
  for (const auto& block : blocks) {
    if (block.size() > names.size()) names = testing::Names(block);
  }
  // PFC on priority 3 (capture 24 had PFC off): the names mlx5 adds in per_prio.
  for (const char* n : {"rx_prio3_pause", "rx_prio3_pause_duration", "tx_prio3_pause",
                        "tx_prio3_pause_duration", "rx_prio3_pause_transition"}) {
    names.emplace_back(n);
  }
  return names;
}

inline std::vector<std::string> Mlx5RdmaNames() {
  return {"rx_write_requests",
          "rx_read_requests",
          "rx_atomic_requests",
          "rx_dct_connect",
          "out_of_buffer",
          "out_of_sequence",
          "duplicate_request",
          "rnr_nak_retry_err",
          "packet_seq_err",
          "implied_nak_seq_err",
          "local_ack_timeout_err",
          "resp_local_length_error",
          "resp_cqe_error",
          "req_cqe_error",
          "req_remote_invalid_request",
          "req_remote_access_errors",
          "resp_remote_access_errors",
          "resp_cqe_flush_error",
          "req_cqe_flush_error",
          "req_transport_retries_exceeded",
          "req_rnr_retries_exceeded",
          "roce_adp_retrans",
          "roce_adp_retrans_to",
          "roce_slow_restart",
          "roce_slow_restart_cnps",
          "roce_slow_restart_trans",
          "rp_cnp_ignored",
          "rp_cnp_handled",
          "np_ecn_marked_roce_packets",
          "np_cnp_sent",
          "rx_icrc_encapsulated"};
}

/// A sampler over `devices` fake ConnectX ports; the first sample (discovery + name mapping) has
/// been taken, so SampleOnce() from here on is the steady state.
inline std::unique_ptr<Sampler> MakeFleetSampler(int devices, testing::FakeClock& clock,
                                                 std::optional<std::regex> raw_include = {}) {
  const std::vector<std::string> names = Mlx5Names();
  auto inventory = std::make_unique<testing::FakeInventory>();
  auto ethtool = std::make_unique<testing::FakeEthtool>();
  std::map<std::string, CounterSet> rdma_counters;
  for (int i = 0; i < devices; ++i) {
    Device d = testing::MakeDevice("ens" + std::to_string(i) + "f0np0", i + 2);
    d.rdma_ports.push_back(testing::MakePort("mlx5_" + std::to_string(i), 1, d.name));
    ethtool->SetNames(d.name, names);
    auto& values = ethtool->entries[d.name].values;
    for (size_t v = 0; v < values.size(); ++v) values[v] = 1'000'000'007ULL * (v + 1) + i;
    const std::vector<std::string> rdma_names = Mlx5RdmaNames();
    std::vector<uint64_t> rdma_values(rdma_names.size(), 123456789);
    rdma_counters["mlx5_" + std::to_string(i) + "/1"] =
        testing::MakeCounters(rdma_names, std::move(rdma_values));
    inventory->inventory.devices.push_back(std::move(d));
  }
  SamplerSources sources;
  sources.inventory = std::move(inventory);
  sources.ethtool = std::move(ethtool);
  sources.open_rdma = [rdma_counters]() -> Result<std::unique_ptr<RdmaCollector>> {
    auto rdma = std::make_unique<testing::FakeRdma>();
    rdma->counters = rdma_counters;
    return std::unique_ptr<RdmaCollector>(std::move(rdma));
  };
  sources.map_ethtool_names = MapMlx5EthtoolNames;
  sources.selected_by_default = [](const Device&) { return true; };
  SamplerOptions options;
  options.raw_include = std::move(raw_include);
  auto sampler = std::make_unique<Sampler>(std::move(options), std::move(sources), clock.AsClock());
  sampler->SampleOnce();
  return sampler;
}

}  // namespace roceqos::bench
