// rtnetlink address replies (collectors/addresses.cc ParseAddrReply), one RTM_GETADDR dump's
// datagram per input, and the texts the GID check makes of each parsed address.
#include "collectors/addresses.h"
#include "collectors/netlink/socket.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)roceqos::netlink::ForEachMessage(
      roceqos::fuzz::AsBytes(data, size), "fuzz",
      [](const roceqos::netlink::NlMessage& msg) -> roceqos::Result<void> {
        auto address = roceqos::ParseAddrReply(msg.body);
        if (address && *address) {
          (void)roceqos::AddressText(**address);
          (void)roceqos::GidTextOf(**address);
          (void)roceqos::AddressSettled(**address);
        }
        return {};
      });
  return 0;
}
