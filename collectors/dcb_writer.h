#pragma once

// The DCB writes of remediation: RTM_SETDCB with DCB_CMD_IEEE_SET or DCB_CMD_IEEE_DEL, the
// requests `dcb` and `mlnx_qos` send. Only exporter/qos's write path uses them; every read is
// DcbReader's (collectors/dcb.h).

#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/dcb.h"
#include "collectors/netlink/attr.h"

namespace roceqos {

/// Parses the attributes of an RTM_SETDCB reply to IEEE_SET/IEEE_DEL: the kernel reports the
/// driver's verdict in-band as DCB_ATTR_IEEE u8 = negative errno (as int8) while the netlink ACK
/// is 0 (§1.7). A missing status is an Error too: the write cannot be confirmed.
Result<void> ParseSetReplyPayload(netlink::Bytes payload, std::string_view context);

/// Parts of an IEEE_SET. Unset optionals are not sent.
struct DcbWrite {
  std::optional<PfcState> pfc;
  std::optional<EtsState> ets;
  std::optional<BufferState> buffer;
  std::vector<DcbApp> apps;  // IEEE_SET adds them, IEEE_DEL removes them
};

/// Writes DCB through one rtnetlink socket. Not thread-safe (one per thread).
class DcbWriter {
 public:
  explicit DcbWriter(netlink::Socket* socket) : socket_(socket) {}

  /// IEEE_SET of the given parts; checks the in-band status. Needs CAP_NET_ADMIN.
  Result<void> Set(std::string_view netdev, const DcbWrite& write);
  /// IEEE_DEL of APP entries; checks the in-band status. Needs CAP_NET_ADMIN.
  Result<void> DeleteApps(std::string_view netdev, const std::vector<DcbApp>& apps);

 private:
  Result<void> Write(uint8_t cmd, std::string_view netdev, const DcbWrite& write);
  netlink::Socket* socket_;
};

}  // namespace roceqos
