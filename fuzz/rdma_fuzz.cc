// RDMA nldev replies (rdma.cc): STAT_GET hardware counters, PORT_GET and device GET payloads.
#include "collectors/rdma.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto payload = roceqos::fuzz::AsBytes(data, size);
  auto stat = roceqos::ParseRdmaStatReply(payload);
  if (stat) (void)roceqos::ParseRdmaStatReply(payload, stat->names);  // the shared-names path
  (void)roceqos::ParseRdmaPortReply(payload);
  (void)roceqos::ParseRdmaDeviceReply(payload);
  return 0;
}
