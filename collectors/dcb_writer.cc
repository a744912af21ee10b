#include "collectors/dcb_writer.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>

#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::Bytes;

// Top level of an IEEE_SET/IEEE_DEL reply: DCB_ATTR_IEEE is the u8 status there.
constexpr auto kSetReplyPolicy = netlink::MakePolicy<DCB_ATTR_MAX + 1>({
    {DCB_ATTR_IFNAME, netlink::attr::String("DCB_ATTR_IFNAME", IFNAMSIZ)},
    {DCB_ATTR_IEEE, netlink::attr::Required(netlink::attr::U8("DCB_ATTR_IEEE (status)"))},
    {DCB_ATTR_DCBX, netlink::attr::U8("DCB_ATTR_DCBX")},
});

ieee_ets RawEts(const EtsState& e) {
  ieee_ets raw{};
  raw.willing = e.willing;
  raw.ets_cap = e.ets_cap;
  raw.cbs = e.cbs;
  std::copy(e.tc_tx_bw.begin(), e.tc_tx_bw.end(), raw.tc_tx_bw);
  std::copy(e.tc_rx_bw.begin(), e.tc_rx_bw.end(), raw.tc_rx_bw);
  std::copy(e.tc_tsa.begin(), e.tc_tsa.end(), raw.tc_tsa);
  std::copy(e.prio_tc.begin(), e.prio_tc.end(), raw.prio_tc);
  std::copy(e.tc_reco_bw.begin(), e.tc_reco_bw.end(), raw.tc_reco_bw);
  std::copy(e.tc_reco_tsa.begin(), e.tc_reco_tsa.end(), raw.tc_reco_tsa);
  std::copy(e.reco_prio_tc.begin(), e.reco_prio_tc.end(), raw.reco_prio_tc);
  return raw;
}

// The DCB_ATTR_IEEE nest of an RTM_SETDCB request.
void PutIeeeAttrs(const DcbWrite& write, netlink::Message& request) {
  size_t ieee = request.BeginNest(DCB_ATTR_IEEE);
  // The kernel applies ETS, MAXRATE, QCN, PFC, BUFFER, APP in that order and stops at the first
  // error, so one message carries all parts.
  if (write.ets) {
    const ieee_ets raw = RawEts(*write.ets);
    request.Put(DCB_ATTR_IEEE_ETS, &raw, sizeof raw);
  }
  if (write.pfc) {
    ieee_pfc raw{};
    raw.pfc_cap = write.pfc->cap;
    raw.pfc_en = write.pfc->enabled_mask;
    raw.mbc = write.pfc->mbc;
    raw.delay = write.pfc->delay;
    request.Put(DCB_ATTR_IEEE_PFC, &raw, sizeof raw);
  }
  if (write.buffer) {
    dcbnl_buffer raw{};
    std::copy(write.buffer->prio_buffer.begin(), write.buffer->prio_buffer.end(), raw.prio2buffer);
    std::copy(write.buffer->size.begin(), write.buffer->size.end(), raw.buffer_size);
    raw.total_size = write.buffer->total_size;
    request.Put(DCB_ATTR_DCB_BUFFER, &raw, sizeof raw);
  }
  if (!write.apps.empty()) {
    size_t table = request.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
    for (const auto& app : write.apps) {
      dcb_app raw{app.selector, app.priority, app.protocol};
      request.Put(app.selector == DCB_APP_SEL_PCP ? DCB_ATTR_DCB_APP : DCB_ATTR_IEEE_APP, &raw,
                  sizeof raw);
    }
    request.EndNest(table);
  }
  request.EndNest(ieee);
}

}  // namespace

Result<void> ParseSetReplyPayload(Bytes payload, std::string_view context) {
  auto top = Attrs::Parse(payload, kSetReplyPolicy, context);
  if (!top) return top.error();
  auto status = top->U8(DCB_ATTR_IEEE);  // required by the policy
  // dcbnl_ieee_set/del: nla_put_u8(skb, DCB_ATTR_IEEE, err) keeps the low byte of the negative
  // errno. Read as int8 that misreports every errno above 127 (EHWPOISON 133 came back as -123);
  // the errno is the byte's two's complement in 8 bits. Kernel-internal codes of 256 and above
  // (ENOTSUPP 524) are folded by the kernel itself and cannot be recovered (524 reads as 12).
  const int errnum = *status == 0 ? 0 : 256 - static_cast<int>(*status);
  if (errnum != 0)
    return MakeError(errnum, fmt::format("{}: kernel rejected the write: {} (errno {})", context,
                                         std::strerror(errnum), errnum));
  return {};
}

Result<void> DcbWriter::Set(std::string_view netdev, const DcbWrite& write) {
  return Write(DCB_CMD_IEEE_SET, netdev, write);
}

Result<void> DcbWriter::DeleteApps(std::string_view netdev, const std::vector<DcbApp>& apps) {
  DcbWrite write;
  write.apps = apps;
  return Write(DCB_CMD_IEEE_DEL, netdev, write);
}

Result<void> DcbWriter::Write(uint8_t cmd, std::string_view netdev, const DcbWrite& write) {
  std::string context =
      fmt::format("RTM_SETDCB {} {}", cmd == DCB_CMD_IEEE_DEL ? "IEEE_DEL" : "IEEE_SET", netdev);
  netlink::Message request(RTM_SETDCB, NLM_F_ACK);
  dcbmsg header{AF_UNSPEC, cmd, 0};
  request.PutHeader(&header, sizeof header);
  request.PutString(DCB_ATTR_IFNAME, netdev);
  PutIeeeAttrs(write, request);

  bool replied = false;
  Result<void> verdict;
  auto status = socket_->Request(
      request,
      [&](const netlink::NlMessage& reply) -> Result<void> {
        if (reply.header.nlmsg_type != RTM_SETDCB) return {};
        auto payload = netlink::Payload(reply, sizeof(dcbmsg), context);
        if (!payload) return payload.error();
        replied = true;
        verdict = ParseSetReplyPayload(*payload, context);
        return {};
      },
      context);
  if (!status) return status.error();
  if (!replied)
    return MakeError(EPROTO, fmt::format("{}: no status reply before the ACK", context));
  return verdict;
}

}  // namespace roceqos
