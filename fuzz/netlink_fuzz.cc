// Netlink framing (nlmsghdr walk) and the attribute walker, recursing into every attribute as if
// it were a nest: the walkers must bound every nlmsg_len / nla_len by the bytes present.
#include <functional>

#include "collectors/netlink/attr.h"
#include "collectors/netlink/genl.h"
#include "collectors/netlink/socket.h"
#include "fuzz/fuzz_util.h"

namespace {

using roceqos::Result;
using roceqos::netlink::Bytes;

void WalkAttrs(Bytes stream, int depth) {
  if (depth > 4) return;
  (void)roceqos::netlink::ForEachAttr(stream, "fuzz", [&](uint16_t, Bytes payload) -> Result<void> {
    WalkAttrs(payload, depth + 1);
    return {};
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes input = roceqos::fuzz::AsBytes(data, size);
  (void)roceqos::netlink::ForEachMessage(
      input, "fuzz", [](const roceqos::netlink::NlMessage& msg) -> Result<void> {
        (void)roceqos::netlink::ParseErrorMessage(msg, "fuzz");
        (void)roceqos::netlink::ParseDoneMessage(msg, "fuzz");
        (void)roceqos::netlink::ParseGenlFamilyReply(msg);
        WalkAttrs(msg.body, 0);
        return {};
      });
  WalkAttrs(input, 0);
  return 0;
}
