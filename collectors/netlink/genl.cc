#include "collectors/netlink/genl.h"

#include <fmt/format.h>
#include <linux/genetlink.h>

#include <optional>

namespace roceqos::netlink {
namespace {

constexpr auto kFamilyPolicy = MakePolicy<CTRL_ATTR_MAX + 1>({
    {CTRL_ATTR_FAMILY_ID, attr::Required(attr::U16("CTRL_ATTR_FAMILY_ID"))},
    {CTRL_ATTR_FAMILY_NAME, attr::String("CTRL_ATTR_FAMILY_NAME", GENL_NAMSIZ)},
    {CTRL_ATTR_VERSION, attr::U32("CTRL_ATTR_VERSION")},
    {CTRL_ATTR_MCAST_GROUPS, attr::Nested("CTRL_ATTR_MCAST_GROUPS")},
});

constexpr auto kGroupPolicy = MakePolicy<CTRL_ATTR_MCAST_GRP_MAX + 1>({
    {CTRL_ATTR_MCAST_GRP_NAME,
     attr::Required(attr::NonEmptyString("CTRL_ATTR_MCAST_GRP_NAME", GENL_NAMSIZ))},
    {CTRL_ATTR_MCAST_GRP_ID, attr::Required(attr::U32("CTRL_ATTR_MCAST_GRP_ID"))},
});

}  // namespace

Message GenlRequest(uint16_t family_id, uint8_t cmd, uint8_t version, uint16_t flags) {
  Message msg(family_id, flags);
  genlmsghdr header{};
  header.cmd = cmd;
  header.version = version;
  msg.PutHeader(&header, sizeof(header));
  return msg;
}

Result<GenlFamily> ParseGenlFamilyReply(const NlMessage& reply) {
  constexpr std::string_view kContext = "CTRL_CMD_NEWFAMILY";
  Result<Bytes> payload = Payload(reply, GENL_HDRLEN, kContext);
  if (!payload) return payload.error();
  Result<Attrs> attrs = Attrs::Parse(*payload, kFamilyPolicy, kContext);
  if (!attrs) return attrs.error();
  GenlFamily family;
  family.id = *attrs->U16(CTRL_ATTR_FAMILY_ID);
  family.version = attrs->U32(CTRL_ATTR_VERSION).value_or(0);
  // CTRL_ATTR_MCAST_GROUPS: a list of nests (their types are 1-based indexes), each a group.
  Result<void> groups = ForEachAttr(
      attrs->Raw(CTRL_ATTR_MCAST_GROUPS), "CTRL_ATTR_MCAST_GROUPS",
      [&](uint16_t, Bytes entry) -> Result<void> {
        Result<Attrs> group = Attrs::Parse(entry, kGroupPolicy, "CTRL_ATTR_MCAST_GRP");
        if (!group) return group.error();
        family.multicast_groups.push_back({std::string(*group->String(CTRL_ATTR_MCAST_GRP_NAME)),
                                           *group->U32(CTRL_ATTR_MCAST_GRP_ID)});
        return {};
      });
  if (!groups) return groups.error();
  return family;
}

Result<GenlFamily> ResolveGenlFamily(Socket& socket, std::string_view name) {
  Message request = GenlRequest(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
  request.PutString(CTRL_ATTR_FAMILY_NAME, name);
  std::optional<GenlFamily> found;
  const std::string context = fmt::format("CTRL_CMD_GETFAMILY {}", name);
  Result<void> status = socket.Request(
      request,
      [&](const NlMessage& reply) -> Result<void> {
        Result<GenlFamily> family = ParseGenlFamilyReply(reply);
        if (!family) return family.error();
        found = std::move(*family);
        return {};
      },
      context);
  if (!status) return status.error();
  if (!found) return MakeError(ENOENT, context + ": no reply with the family");
  return std::move(*found);
}

}  // namespace roceqos::netlink
