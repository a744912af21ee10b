#include "collectors/dcb.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "collectors/netlink/socket.h"

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::Bytes;

static_assert(sizeof(ieee_ets) == 59);
static_assert(sizeof(ieee_pfc) == 136);
static_assert(sizeof(ieee_maxrate) == 64);
static_assert(sizeof(dcbnl_buffer) == 44);
static_assert(sizeof(dcb_app) == 4);
static_assert(sizeof(dcbmsg) == 4);

// Top level of an IEEE_GET reply (enum dcbnl_attrs).
constexpr auto kTopPolicy = netlink::MakePolicy<DCB_ATTR_MAX + 1>({
    {DCB_ATTR_IFNAME, netlink::attr::String("DCB_ATTR_IFNAME", IFNAMSIZ)},
    {DCB_ATTR_IEEE, netlink::attr::Required(netlink::attr::Nested("DCB_ATTR_IEEE"))},
    {DCB_ATTR_DCBX, netlink::attr::U8("DCB_ATTR_DCBX")},
});

// Inside DCB_ATTR_IEEE (enum ieee_attrs). Peer objects and QCN are not read (mlx5 has neither).
constexpr auto kIeeePolicy = netlink::MakePolicy<DCB_ATTR_IEEE_MAX + 1>({
    {DCB_ATTR_IEEE_ETS, netlink::attr::Struct<ieee_ets>("DCB_ATTR_IEEE_ETS")},
    {DCB_ATTR_IEEE_PFC, netlink::attr::Struct<ieee_pfc>("DCB_ATTR_IEEE_PFC")},
    {DCB_ATTR_IEEE_APP_TABLE, netlink::attr::Nested("DCB_ATTR_IEEE_APP_TABLE")},
    {DCB_ATTR_IEEE_MAXRATE, netlink::attr::Struct<ieee_maxrate>("DCB_ATTR_IEEE_MAXRATE")},
    {DCB_ATTR_DCB_BUFFER, netlink::attr::Struct<dcbnl_buffer>("DCB_ATTR_DCB_BUFFER")},
    {DCB_ATTR_DCB_APP_TRUST_TABLE, netlink::attr::Nested("DCB_ATTR_DCB_APP_TRUST_TABLE")},
});

template <size_t N>
std::array<uint8_t, N> ToArray(const __u8 (&in)[N]) {
  std::array<uint8_t, N> out{};
  std::copy(std::begin(in), std::end(in), out.begin());
  return out;
}

Result<std::vector<DcbApp>> ParseAppTable(Bytes table, std::string_view context) {
  std::vector<DcbApp> apps;
  auto status =
      netlink::ForEachAttr(table, context, [&](uint16_t type, Bytes payload) -> Result<void> {
        // DCB_ATTR_IEEE_APP: selectors 1-5; DCB_ATTR_DCB_APP: DCB_APP_SEL_PCP (v6.2). Both carry a
        // struct dcb_app.
        if (type != DCB_ATTR_IEEE_APP && type != DCB_ATTR_DCB_APP)
          return MakeError(
              EINVAL, fmt::format("{}: unexpected attribute type {} in APP table", context, type));
        if (payload.size() != sizeof(dcb_app))
          return MakeError(EINVAL, fmt::format("{}: APP entry of {} bytes, expected {}", context,
                                               payload.size(), sizeof(dcb_app)));
        dcb_app raw{};
        std::memcpy(&raw, payload.data(), sizeof raw);
        apps.push_back(DcbApp{raw.selector, raw.priority, raw.protocol});
        return {};
      });
  if (!status) return status.error();
  std::sort(apps.begin(), apps.end());
  return apps;
}

Result<std::vector<uint8_t>> ParseTrustTable(Bytes table, std::string_view context) {
  std::vector<uint8_t> selectors;
  auto status =
      netlink::ForEachAttr(table, context, [&](uint16_t type, Bytes payload) -> Result<void> {
        // Each entry is a u8 selector, typed DCB_ATTR_IEEE_APP (1-5) or DCB_ATTR_DCB_APP (PCP).
        if (type != DCB_ATTR_IEEE_APP && type != DCB_ATTR_DCB_APP)
          return MakeError(EINVAL, fmt::format("{}: unexpected attribute type {} in apptrust table",
                                               context, type));
        if (payload.size() != 1)
          return MakeError(EINVAL, fmt::format("{}: apptrust entry of {} bytes, expected 1",
                                               context, payload.size()));
        selectors.push_back(static_cast<uint8_t>(payload[0]));
        return {};
      });
  if (!status) return status.error();
  return selectors;
}

}  // namespace

std::string_view TrustModeName(TrustMode mode) { return NameOf(kTrustModeNames, mode); }

std::string_view TsaName(uint8_t tsa) { return NameOf(kTsaNames, static_cast<Tsa>(tsa)); }

static_assert(static_cast<uint8_t>(Tsa::kStrict) == IEEE_8021QAZ_TSA_STRICT &&
              static_cast<uint8_t>(Tsa::kCbShaper) == IEEE_8021QAZ_TSA_CB_SHAPER &&
              static_cast<uint8_t>(Tsa::kEts) == IEEE_8021QAZ_TSA_ETS &&
              static_cast<uint8_t>(Tsa::kVendor) == IEEE_8021QAZ_TSA_VENDOR);

std::string_view DcbxModeName(uint8_t dcbx) {
  if (dcbx & DCB_CAP_DCBX_HOST) return "host";
  if (dcbx & DCB_CAP_DCBX_LLD_MANAGED) return "lld_managed";
  return "firmware";
}

TrustMode QosState::Trust() const {
  if (app_trust) {
    bool dscp = std::find(app_trust->begin(), app_trust->end(), IEEE_8021QAZ_APP_SEL_DSCP) !=
                app_trust->end();
    return dscp ? TrustMode::kDscp : TrustMode::kPcp;
  }
  for (const auto& app : apps)
    if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP) return TrustMode::kDscp;
  return TrustMode::kPcp;
}

std::map<uint16_t, uint8_t> LowestDscpPriorities(const std::vector<DcbApp>& apps) {
  std::map<uint16_t, uint8_t> lowest;
  for (const DcbApp& app : apps) {
    if (app.selector != IEEE_8021QAZ_APP_SEL_DSCP) continue;
    auto [it, inserted] = lowest.try_emplace(app.protocol, app.priority);
    if (!inserted) it->second = std::min(it->second, app.priority);
  }
  return lowest;
}

std::vector<uint8_t> QosState::DscpPriorities(uint8_t dscp) const {
  std::vector<uint8_t> prios;
  for (const auto& app : apps)
    if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP && app.protocol == dscp)
      prios.push_back(app.priority);
  return prios;
}

namespace {

// struct ieee_ets: every priority must name one of the 8 TCs.
Result<EtsState> ParseEts(const Attrs& ieee, std::string_view context) {
  ieee_ets raw{};
  ieee.CopyStruct(DCB_ATTR_IEEE_ETS, &raw);
  EtsState ets;
  ets.willing = raw.willing;
  ets.ets_cap = raw.ets_cap;
  ets.cbs = raw.cbs;
  ets.tc_tx_bw = ToArray(raw.tc_tx_bw);
  ets.tc_rx_bw = ToArray(raw.tc_rx_bw);
  ets.tc_tsa = ToArray(raw.tc_tsa);
  ets.prio_tc = ToArray(raw.prio_tc);
  ets.tc_reco_bw = ToArray(raw.tc_reco_bw);
  ets.tc_reco_tsa = ToArray(raw.tc_reco_tsa);
  ets.reco_prio_tc = ToArray(raw.reco_prio_tc);
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    if (ets.prio_tc[prio] >= kNumTcs)
      return MakeError(EINVAL, fmt::format("{}: ieee_ets.prio_tc[{}] = {} is not a TC", context,
                                           prio, ets.prio_tc[prio]));
  }
  return ets;
}

// struct ieee_maxrate, Kbit/s per TC.
std::array<uint64_t, kNumTcs> ParseMaxrate(const Attrs& ieee) {
  ieee_maxrate raw{};
  ieee.CopyStruct(DCB_ATTR_IEEE_MAXRATE, &raw);
  std::array<uint64_t, kNumTcs> rates{};
  std::copy(std::begin(raw.tc_maxrate), std::end(raw.tc_maxrate), rates.begin());
  return rates;
}

// struct dcbnl_buffer.
BufferState ParseBuffer(const Attrs& ieee) {
  dcbnl_buffer raw{};
  ieee.CopyStruct(DCB_ATTR_DCB_BUFFER, &raw);
  BufferState buffer;
  buffer.prio_buffer = ToArray(raw.prio2buffer);
  std::copy(std::begin(raw.buffer_size), std::end(raw.buffer_size), buffer.size.begin());
  buffer.total_size = raw.total_size;
  return buffer;
}

// DCB_ATTR_IEEE_APP_TABLE and DCB_ATTR_DCB_APP_TRUST_TABLE.
Result<void> ParseAppTables(const Attrs& ieee, std::string_view context, QosState& state) {
  if (ieee.Has(DCB_ATTR_IEEE_APP_TABLE)) {
    auto apps = ParseAppTable(ieee.Raw(DCB_ATTR_IEEE_APP_TABLE), context);
    if (!apps) return apps.error();
    state.apps = std::move(*apps);
  }
  if (ieee.Has(DCB_ATTR_DCB_APP_TRUST_TABLE)) {
    auto trust = ParseTrustTable(ieee.Raw(DCB_ATTR_DCB_APP_TRUST_TABLE), context);
    if (!trust) return trust.error();
    state.app_trust = std::move(*trust);
  }
  return {};
}

}  // namespace

Result<QosState> ParseIeeeGetPayload(Bytes payload, std::string_view netdev) {
  std::string context = fmt::format("RTM_GETDCB IEEE_GET {}", netdev);
  auto top = Attrs::Parse(payload, kTopPolicy, context);
  if (!top) return top.error();
  auto ieee = top->Nested(DCB_ATTR_IEEE, kIeeePolicy, context);
  if (!ieee) return ieee.error();

  QosState state;
  if (ieee->Has(DCB_ATTR_IEEE_PFC)) {  // struct ieee_pfc
    ieee_pfc raw{};
    ieee->CopyStruct(DCB_ATTR_IEEE_PFC, &raw);
    state.pfc = PfcState{raw.pfc_cap, raw.pfc_en, raw.mbc, raw.delay};
  }
  if (ieee->Has(DCB_ATTR_IEEE_ETS)) {
    auto ets = ParseEts(*ieee, context);
    if (!ets) return ets.error();
    state.ets = *ets;
  }
  if (ieee->Has(DCB_ATTR_IEEE_MAXRATE)) state.maxrate_kbps = ParseMaxrate(*ieee);
  if (ieee->Has(DCB_ATTR_DCB_BUFFER)) state.buffer = ParseBuffer(*ieee);
  if (auto tables = ParseAppTables(*ieee, context, state); !tables) return tables.error();
  state.dcbx = top->U8(DCB_ATTR_DCBX);  // after the IEEE nest, when ops->getdcbx exists
  return state;
}

Result<std::optional<QosState>> DcbReader::Read(std::string_view netdev) {
  std::string context = fmt::format("RTM_GETDCB IEEE_GET {}", netdev);
  netlink::Message request(RTM_GETDCB, NLM_F_ACK);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  request.PutHeader(&header, sizeof header);
  request.PutString(DCB_ATTR_IFNAME, netdev);

  std::optional<QosState> state;
  auto status = socket_->Request(
      request,
      [&](const netlink::NlMessage& reply) -> Result<void> {
        if (reply.header.nlmsg_type != RTM_GETDCB) return {};  // not ours to read
        auto payload = netlink::Payload(reply, sizeof(dcbmsg), context);
        if (!payload) return payload.error();
        auto parsed = ParseIeeeGetPayload(*payload, netdev);
        if (!parsed) return parsed.error();
        state = std::move(*parsed);
        return {};
      },
      context);
  if (!status) {
    if (status.error().NotSupported()) return std::optional<QosState>();
    return status.error();
  }
  if (!state) return MakeError(EPROTO, fmt::format("{}: no reply before the ACK", context));
  return state;
}

}  // namespace roceqos
