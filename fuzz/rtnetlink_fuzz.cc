// rtnetlink link replies (discovery.cc ParseLinkReply) and RTNLGRP_LINK / RTNLGRP_DCB
// notifications (monitor.cc ParseChangeNotification), one datagram per input.
#include <chrono>

#include "collectors/discovery.h"
#include "collectors/monitor.h"
#include "collectors/netlink/socket.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto now = std::chrono::steady_clock::now();
  (void)roceqos::netlink::ForEachMessage(
      roceqos::fuzz::AsBytes(data, size), "fuzz",
      [&](const roceqos::netlink::NlMessage& msg) -> roceqos::Result<void> {
        (void)roceqos::ParseLinkReply(msg.body);
        (void)roceqos::ParseChangeNotification(msg, now);
        return {};
      });
  return 0;
}
