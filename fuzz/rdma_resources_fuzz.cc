// RDMA restrack replies (rdma_resources.cc): RES_QP_GET dump messages folded into per-owner
// counts, and RES_GET summaries.
#include "collectors/rdma_resources.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto payload = roceqos::fuzz::AsBytes(data, size);
  roceqos::RdmaQpTally tally;
  const bool added = tally.AddQpReply(payload).ok();
  // A rejected message adds nothing; an accepted one is counted once per QP.
  uint64_t counted = tally.overflow_qps();
  for (const auto& [key, count] : tally.owners()) {
    if (count.qps_in_error > count.qps) __builtin_trap();
    counted += count.qps;
  }
  if (counted != tally.total_qps() || (!added && counted != 0)) __builtin_trap();
  (void)roceqos::ParseRdmaResourceSummary(payload);
  return 0;
}
