// dcbnl DCB_CMD_IEEE_GET reply attributes (dcb.cc ParseIeeeGetPayload: ETS, PFC, APP table,
// DCBX) and the in-band status of an IEEE_SET reply (ParseSetReplyPayload).
#include "collectors/dcb.h"
#include "collectors/dcb_writer.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto payload = roceqos::fuzz::AsBytes(data, size);
  (void)roceqos::ParseIeeeGetPayload(payload, "fuzz0");
  (void)roceqos::ParseSetReplyPayload(payload, "fuzz0");
  return 0;
}
