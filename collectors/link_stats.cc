#include "collectors/link_stats.h"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collectors/netlink/attr.h"
#include "collectors/netlink/genl.h"

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::Bytes;
namespace attr = netlink::attr;

// ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT (u32, net/ethtool/linkstate.c) came with Linux 6.2, after
// Debian 12's UAPI headers (6.1, which end at ETHTOOL_A_LINKSTATE_EXT_SUBSTATE): defined here by
// its place in the enum, the one after ETHTOOL_A_LINKSTATE_EXT_SUBSTATE.
constexpr uint16_t kLinkstateExtDownCnt = ETHTOOL_A_LINKSTATE_EXT_SUBSTATE + 1;
constexpr size_t kLinkstatePolicySize =
    std::max<size_t>(ETHTOOL_A_LINKSTATE_MAX, kLinkstateExtDownCnt) + 1;

constexpr auto kFecPolicy = netlink::MakePolicy<ETHTOOL_A_FEC_MAX + 1>({
    {ETHTOOL_A_FEC_HEADER, attr::Nested("ETHTOOL_A_FEC_HEADER")},
    {ETHTOOL_A_FEC_AUTO, attr::U8("ETHTOOL_A_FEC_AUTO")},
    {ETHTOOL_A_FEC_ACTIVE, attr::U32("ETHTOOL_A_FEC_ACTIVE")},
    {ETHTOOL_A_FEC_STATS, attr::Nested("ETHTOOL_A_FEC_STATS")},
});

// Each an array of u64 (net/ethtool/fec.c fec_put_stats: total, then one per lane); 0 bytes when
// the driver left the figure unset. The multiple-of-8 check is FecArray's.
constexpr auto kFecStatPolicy = netlink::MakePolicy<ETHTOOL_A_FEC_STAT_MAX + 1>({
    {ETHTOOL_A_FEC_STAT_CORRECTED, attr::Binary("ETHTOOL_A_FEC_STAT_CORRECTED", 0, 0)},
    {ETHTOOL_A_FEC_STAT_UNCORR, attr::Binary("ETHTOOL_A_FEC_STAT_UNCORR", 0, 0)},
    {ETHTOOL_A_FEC_STAT_CORR_BITS, attr::Binary("ETHTOOL_A_FEC_STAT_CORR_BITS", 0, 0)},
});

constexpr auto kLinkstatePolicy = netlink::MakePolicy<kLinkstatePolicySize>({
    {ETHTOOL_A_LINKSTATE_HEADER, attr::Nested("ETHTOOL_A_LINKSTATE_HEADER")},
    {ETHTOOL_A_LINKSTATE_LINK, attr::U8("ETHTOOL_A_LINKSTATE_LINK")},
    {kLinkstateExtDownCnt, attr::U32("ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT")},
});

// One ETHTOOL_A_STATS_GRP nest: which group (ETHTOOL_STATS_ETH_PHY, ...) and its statistics, each
// an ETHTOOL_A_STATS_GRP_STAT nest (which repeats: walked with ForEachAttr).
constexpr auto kStatsGroupPolicy = netlink::MakePolicy<ETHTOOL_A_STATS_GRP_MAX + 1>({
    {ETHTOOL_A_STATS_GRP_ID, attr::Required(attr::U32("ETHTOOL_A_STATS_GRP_ID"))},
    {ETHTOOL_A_STATS_GRP_SS_ID, attr::U32("ETHTOOL_A_STATS_GRP_SS_ID")},
});

Result<std::vector<uint64_t>> FecArray(const Attrs& stats, uint16_t type, std::string_view name) {
  Bytes raw = stats.Raw(type);
  if (raw.size() % sizeof(uint64_t) != 0) {
    return MakeError(0, fmt::format("ETHTOOL_MSG_FEC_GET_REPLY: {} is {} bytes, not a u64 array",
                                    name, raw.size()));
  }
  std::vector<uint64_t> values(raw.size() / sizeof(uint64_t));
  if (!values.empty()) std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

Result<void> ParseFecStats(const Attrs& top, FecReply& out) {
  if (!top.Has(ETHTOOL_A_FEC_STATS)) return {};
  Result<Attrs> stats = top.Nested(ETHTOOL_A_FEC_STATS, kFecStatPolicy, "ETHTOOL_A_FEC_STATS");
  if (!stats) return stats.error();
  struct Field {
    uint16_t type;
    std::string_view name;
    std::vector<uint64_t>* into;
  };
  // ETHTOOL_A_FEC_STAT_CORRECTED / _UNCORR: RS/FC blocks; _CORR_BITS: bits the FEC corrected.
  for (const Field& f :
       {Field{ETHTOOL_A_FEC_STAT_CORRECTED, "ETHTOOL_A_FEC_STAT_CORRECTED", &out.corrected_blocks},
        Field{ETHTOOL_A_FEC_STAT_UNCORR, "ETHTOOL_A_FEC_STAT_UNCORR", &out.uncorrectable_blocks},
        Field{ETHTOOL_A_FEC_STAT_CORR_BITS, "ETHTOOL_A_FEC_STAT_CORR_BITS", &out.corrected_bits}}) {
    Result<std::vector<uint64_t>> values = FecArray(*stats, f.type, f.name);
    if (!values) return values.error();
    *f.into = std::move(*values);
  }
  return {};
}

// One ETHTOOL_A_STATS_GRP_STAT nest holds one attribute whose type is the statistic's id within
// its group and whose payload is a u64 (stat_put in net/ethtool/stats.c). A pad attribute may
// precede it on architectures that align u64s; only the wanted id is taken.
Result<void> ParseGroupStat(Bytes stat, uint16_t wanted, std::optional<uint64_t>& out) {
  return netlink::ForEachAttr(stat, "ETHTOOL_A_STATS_GRP_STAT",
                              [&](uint16_t type, Bytes value) -> Result<void> {
                                if (type != wanted) return {};
                                if (value.size() != sizeof(uint64_t)) {
                                  return MakeError(0, fmt::format("ETHTOOL_A_STATS_GRP_STAT {}: "
                                                                  "{} bytes, expected a u64",
                                                                  type, value.size()));
                                }
                                uint64_t v = 0;
                                std::memcpy(&v, value.data(), sizeof(v));
                                out = v;
                                return {};
                              });
}

Result<void> ParseStatsGroup(Bytes group, StdStatsReply& out) {
  Result<Attrs> attrs = Attrs::Parse(group, kStatsGroupPolicy, "ETHTOOL_A_STATS_GRP");
  if (!attrs) return attrs.error();
  const uint32_t id = *attrs->U32(ETHTOOL_A_STATS_GRP_ID);
  std::optional<uint64_t>* into = nullptr;
  uint16_t wanted = 0;
  if (id == ETHTOOL_STATS_ETH_PHY) {
    into = &out.symbol_errors;  // ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR: aSymbolErrorDuringCarrier
    wanted = ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR;
  } else if (id == ETHTOOL_STATS_ETH_MAC) {
    into = &out.fcs_errors;  // ETHTOOL_A_STATS_ETH_MAC_6_FCS_ERR: aFrameCheckSequenceErrors
    wanted = ETHTOOL_A_STATS_ETH_MAC_6_FCS_ERR;
  } else {
    return {};  // eth-ctrl, rmon: not asked for, skipped if a kernel sends them anyway
  }
  return netlink::ForEachAttr(group, "ETHTOOL_A_STATS_GRP",
                              [&](uint16_t type, Bytes payload) -> Result<void> {
                                if (type != ETHTOOL_A_STATS_GRP_STAT) return {};
                                return ParseGroupStat(payload, wanted, *into);
                              });
}

Result<Bytes> GenlPayload(const netlink::NlMessage& reply, std::string_view context) {
  return netlink::Payload(reply, GENL_HDRLEN, context);
}

}  // namespace

std::string_view FecModeName(uint32_t link_mode_bit) {
  switch (link_mode_bit) {
    case ETHTOOL_LINK_MODE_FEC_NONE_BIT:
      return "none";
    case ETHTOOL_LINK_MODE_FEC_RS_BIT:
      return "rs";
    case ETHTOOL_LINK_MODE_FEC_BASER_BIT:
      return "baser";
    case ETHTOOL_LINK_MODE_FEC_LLRS_BIT:
      return "llrs";
    default:
      return "other";
  }
}

Result<FecReply> ParseFecReply(const netlink::NlMessage& reply) {
  constexpr std::string_view kContext = "ETHTOOL_MSG_FEC_GET_REPLY";
  Result<Bytes> payload = GenlPayload(reply, kContext);
  if (!payload) return payload.error();
  Result<Attrs> attrs = Attrs::Parse(*payload, kFecPolicy, kContext);
  if (!attrs) return attrs.error();
  FecReply out;
  out.active_link_mode = attrs->U32(ETHTOOL_A_FEC_ACTIVE);  // absent: no mode reported
  if (Result<void> stats = ParseFecStats(*attrs, out); !stats) return stats.error();
  return out;
}

Result<StdStatsReply> ParseStdStatsReply(const netlink::NlMessage& reply) {
  constexpr std::string_view kContext = "ETHTOOL_MSG_STATS_GET_REPLY";
  Result<Bytes> payload = GenlPayload(reply, kContext);
  if (!payload) return payload.error();
  StdStatsReply out;
  // ETHTOOL_A_STATS_GRP repeats, once per group: walked, not parsed into a table.
  Result<void> walked =
      netlink::ForEachAttr(*payload, kContext, [&](uint16_t type, Bytes group) -> Result<void> {
        if (type != ETHTOOL_A_STATS_GRP) return {};
        return ParseStatsGroup(group, out);
      });
  if (!walked) return walked.error();
  return out;
}

Result<LinkStateReply> ParseLinkStateReply(const netlink::NlMessage& reply) {
  constexpr std::string_view kContext = "ETHTOOL_MSG_LINKSTATE_GET_REPLY";
  Result<Bytes> payload = GenlPayload(reply, kContext);
  if (!payload) return payload.error();
  Result<Attrs> attrs = Attrs::Parse(*payload, kLinkstatePolicy, kContext);
  if (!attrs) return attrs.error();
  LinkStateReply out;
  if (auto link = attrs->U8(ETHTOOL_A_LINKSTATE_LINK)) out.link_up = *link != 0;
  if (auto downs = attrs->U32(kLinkstateExtDownCnt)) out.link_down_events = *downs;
  return out;
}

namespace {

class KernelLinkStatsIo final : public LinkStatsIo {
 public:
  Result<FecReply> ReadFec(const std::string& ifname) override {
    return Get<FecReply>(ifname, ETHTOOL_MSG_FEC_GET, ETHTOOL_A_FEC_HEADER, ParseFecReply,
                         fec_stats_flag_);
  }

  Result<StdStatsReply> ReadStdStats(const std::string& ifname) override {
    bool no_retry = false;
    return Get<StdStatsReply>(ifname, ETHTOOL_MSG_STATS_GET, ETHTOOL_A_STATS_HEADER,
                              ParseStdStatsReply, no_retry);
  }

  Result<LinkStateReply> ReadLinkState(const std::string& ifname) override {
    return Get<LinkStateReply>(ifname, ETHTOOL_MSG_LINKSTATE_GET, ETHTOOL_A_LINKSTATE_HEADER,
                               ParseLinkStateReply, linkstate_stats_flag_);
  }

 private:
  Result<void> OpenGenl() {
    if (socket_) return {};
    if (family_absent_) return MakeError(EOPNOTSUPP, "no ethtool generic netlink family");
    Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_GENERIC);
    if (!socket) return socket.error();
    Result<netlink::GenlFamily> family = netlink::ResolveGenlFamily(*socket, ETHTOOL_GENL_NAME);
    if (!family) {
      // ENOENT: a kernel before 5.6 has no ethtool family; every figure comes from ethtool -S.
      if (family.error().errnum != ENOENT) return family.error();
      family_absent_ = true;
      return MakeError(EOPNOTSUPP, family.error().message);
    }
    family_id_ = family->id;
    socket_ = std::move(*socket);
    return {};
  }

  netlink::Message Request(const std::string& ifname, uint8_t cmd, uint16_t header_attr,
                           bool stats_flag) {
    netlink::Message request = netlink::GenlRequest(family_id_, cmd, ETHTOOL_GENL_VERSION, 0);
    const size_t header = request.BeginNest(header_attr);
    request.PutString(ETHTOOL_A_HEADER_DEV_NAME, ifname);
    // ETHTOOL_FLAG_STATS: FEC_GET adds ETHTOOL_A_FEC_STATS, LINKSTATE_GET the link-down count.
    if (stats_flag) request.PutU32(ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_STATS);
    request.EndNest(header);
    if (cmd == ETHTOOL_MSG_STATS_GET) PutStatsGroups(request);
    return request;
  }

  // ETHTOOL_A_STATS_GROUPS: a compact bitset over the "stats-std" string set (ETH_SS_STATS_STD,
  // indexed by ETHTOOL_STATS_*) with ETHTOOL_A_BITSET_NOMASK, so exactly eth-phy and eth-mac are
  // asked for (stats_parse_request refuses a request that selects none).
  static void PutStatsGroups(netlink::Message& request) {
    const size_t groups = request.BeginNest(ETHTOOL_A_STATS_GROUPS);
    static constexpr char kFlag = 0;  // a flag attribute has no payload; Put wants a pointer
    request.Put(ETHTOOL_A_BITSET_NOMASK, &kFlag, 0);
    request.PutU32(ETHTOOL_A_BITSET_SIZE, ETHTOOL_STATS_ETH_MAC + 1);
    request.PutU32(ETHTOOL_A_BITSET_VALUE,
                   (1u << ETHTOOL_STATS_ETH_PHY) | (1u << ETHTOOL_STATS_ETH_MAC));
    request.EndNest(groups);
  }

  // A doit request; `stats_flag` is cleared for good when the kernel refuses the flag (EINVAL:
  // LINKSTATE_GET's header policy takes ETHTOOL_FLAG_STATS only from 6.2) and the read is retried
  // without it.
  template <typename T, typename Parse>
  Result<T> Get(const std::string& ifname, uint8_t cmd, uint16_t header_attr, Parse parse,
                bool& stats_flag) {
    if (auto opened = OpenGenl(); !opened) return opened.error();
    Result<T> first = Exchange<T>(ifname, cmd, header_attr, parse, stats_flag);
    if (first.ok() || !stats_flag || first.error().errnum != EINVAL) return first;
    stats_flag = false;
    return Exchange<T>(ifname, cmd, header_attr, parse, false);
  }

  template <typename T, typename Parse>
  Result<T> Exchange(const std::string& ifname, uint8_t cmd, uint16_t header_attr, Parse parse,
                     bool stats_flag) {
    const std::string what = fmt::format("ethtool netlink cmd {} {}", cmd, ifname);
    netlink::Message request = Request(ifname, cmd, header_attr, stats_flag);
    std::optional<Result<T>> parsed;
    Result<void> status = socket_->Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          parsed.emplace(parse(reply));
          if (!*parsed) return parsed->error();
          return {};
        },
        what);
    if (!status) return status.error();
    if (!parsed) return MakeError(EPROTO, what + ": no reply");
    return std::move(*parsed);
  }

  std::optional<netlink::Socket> socket_;
  uint16_t family_id_ = 0;
  bool family_absent_ = false;
  bool fec_stats_flag_ = true;
  bool linkstate_stats_flag_ = true;
};

}  // namespace

std::unique_ptr<LinkStatsIo> MakeKernelLinkStatsIo() {
  return std::make_unique<KernelLinkStatsIo>();
}

Result<LinkNetlinkStats> ReadLinkNetlinkStats(LinkStatsIo& io, const std::string& ifname) {
  LinkNetlinkStats out;
  Result<FecReply> fec = io.ReadFec(ifname);
  if (fec) {
    out.fec = std::move(*fec);
  } else if (!fec.error().NotSupported()) {
    return fec.error();
  }
  Result<StdStatsReply> std_stats = io.ReadStdStats(ifname);
  if (std_stats) {
    out.std_stats = *std_stats;
  } else if (!std_stats.error().NotSupported()) {
    return std_stats.error();
  }
  Result<LinkStateReply> state = io.ReadLinkState(ifname);
  if (state) {
    out.state = *state;
  } else if (!state.error().NotSupported()) {
    return state.error();
  }
  return out;
}

}  // namespace roceqos
