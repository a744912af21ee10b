#pragma once

// Generic netlink on top of Socket: family resolution (CTRL_CMD_GETFAMILY) and request framing
// (nlmsghdr + struct genlmsghdr). ethtool netlink is the generic family the exporter may use.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/netlink/socket.h"

namespace roceqos::netlink {

struct GenlFamily {
  uint16_t id = 0;       // CTRL_ATTR_FAMILY_ID: the nlmsg_type of the family's messages
  uint32_t version = 0;  // CTRL_ATTR_VERSION
  struct Group {
    std::string name;  // CTRL_ATTR_MCAST_GRP_NAME ("monitor" for ethtool)
    uint32_t id = 0;   // CTRL_ATTR_MCAST_GRP_ID, for Socket::JoinGroup
  };
  std::vector<Group> multicast_groups;
};

/// A generic netlink request for `family_id` with the genlmsghdr filled in.
Message GenlRequest(uint16_t family_id, uint8_t cmd, uint8_t version, uint16_t flags);

/// Parses a CTRL_CMD_NEWFAMILY reply message (recorded or live).
Result<GenlFamily> ParseGenlFamilyReply(const NlMessage& reply);

/// Looks a family up by name on a NETLINK_GENERIC socket. ENOENT when the kernel lacks it.
Result<GenlFamily> ResolveGenlFamily(Socket& socket, std::string_view name);

}  // namespace roceqos::netlink
