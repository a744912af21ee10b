// ethtool netlink link replies (collectors/link_stats.cc): every message of the input goes
// through the FEC, standard-statistics and link-state parsers, whose nests (FEC stat arrays,
// repeated stats groups, one-attribute stat nests) must be bounded by the bytes present.
#include "collectors/link_stats.h"
#include "collectors/netlink/socket.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)roceqos::netlink::ForEachMessage(
      roceqos::fuzz::AsBytes(data, size), "fuzz",
      [](const roceqos::netlink::NlMessage& msg) -> roceqos::Result<void> {
        if (auto fec = roceqos::ParseFecReply(msg); fec && fec->active_link_mode) {
          (void)roceqos::FecModeName(*fec->active_link_mode);
        }
        (void)roceqos::ParseStdStatsReply(msg);
        (void)roceqos::ParseLinkStateReply(msg);
        return {};
      });
  return 0;
}
