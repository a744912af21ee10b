// Netlink costs on the sampling path and around it:
// - turning an RDMA_NLDEV_CMD_STAT_GET reply into a CounterSet (the names of an unchanged counter
//   list are shared with the previous sample, so only the values are allocated);
// - one netlink doit round trip through Socket::Request (RTM_GETLINK of lo without NLM_F_ACK, the
//   same framing a per-sample STAT_GET uses);
// - a full Discovery::Discover of the host's netns (not on the sampling path).

#include <benchmark/benchmark.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include <string>
#include <vector>

#include "collectors/discovery.h"
#include "collectors/netlink/socket.h"
#include "collectors/rdma.h"

namespace roceqos {
namespace {

// The 29 hw counters of mlx5_bond_0 in real capture 13 (CX4-Lx LAG, MOFED 5.x).
const char* const kMlx5Counters[] = {"rx_write_requests",
                                     "rx_read_requests",
                                     "rx_atomic_requests",
                                     "out_of_buffer",
                                     "out_of_sequence",
                                     "duplicate_request",
                                     "rnr_nak_retry_err",
                                     "packet_seq_err",
                                     "implied_nak_seq_err",
                                     "local_ack_timeout_err",
                                     "rx_dct_connect",
                                     "resp_local_length_error",
                                     "resp_cqe_error",
                                     "req_cqe_error",
                                     "req_remote_invalid_request",
                                     "req_remote_access_errors",
                                     "resp_remote_access_errors",
                                     "resp_cqe_flush_error",
                                     "req_cqe_flush_error",
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

std::vector<std::byte> StatReply() {
  netlink::Message msg(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0);
  msg.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, 2);
  msg.PutString(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_bond_0");
  msg.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  size_t table = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  uint64_t value = 1;
  for (const char* name : kMlx5Counters) {
    size_t entry = msg.BeginNest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
    msg.PutString(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
    msg.PutU64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value *= 7);
    msg.EndNest(entry);
  }
  msg.EndNest(table);
  auto bytes = msg.bytes().subspan(sizeof(nlmsghdr));
  return {bytes.begin(), bytes.end()};
}

void BM_ParseRdmaStat_SharedNames(benchmark::State& state) {
  const std::vector<std::byte> reply = StatReply();
  Result<CounterSet> previous = ParseRdmaStatReply(reply);
  for (auto _ : state) {
    Result<CounterSet> sample = ParseRdmaStatReply(reply, previous->names);
    benchmark::DoNotOptimize(sample);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(std::size(kMlx5Counters)));
}
BENCHMARK(BM_ParseRdmaStat_SharedNames);

void BM_ParseRdmaStat_FreshNames(benchmark::State& state) {
  const std::vector<std::byte> reply = StatReply();
  for (auto _ : state) {
    Result<CounterSet> sample = ParseRdmaStatReply(reply);
    benchmark::DoNotOptimize(sample);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(std::size(kMlx5Counters)));
}
BENCHMARK(BM_ParseRdmaStat_FreshNames);

void BM_NetlinkDoitRoundTripGetLinkLo(benchmark::State& state) {
  Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_ROUTE);
  if (!socket) {
    state.SkipWithError(socket.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    netlink::Message request(RTM_GETLINK, 0);  // no NLM_F_ACK: the reply completes the doit
    ifinfomsg ifi{};
    ifi.ifi_index = 1;
    request.PutHeader(&ifi, sizeof(ifi));
    request.PutU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
    size_t bytes = 0;
    Result<void> status = socket->Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          bytes += reply.body.size();
          return {};
        },
        "RTM_GETLINK lo");
    if (!status) {
      state.SkipWithError(status.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(bytes);
  }
}
BENCHMARK(BM_NetlinkDoitRoundTripGetLinkLo);

void BM_DiscoveryHost(benchmark::State& state) {
  Discovery discovery;
  size_t devices = 0;
  for (auto _ : state) {
    Result<Inventory> inventory = discovery.Discover();
    if (!inventory) {
      state.SkipWithError(inventory.error().message.c_str());
      return;
    }
    devices = inventory->devices.size();
  }
  state.counters["netdevs"] = static_cast<double>(devices);
}
BENCHMARK(BM_DiscoveryHost);

}  // namespace
}  // namespace roceqos
