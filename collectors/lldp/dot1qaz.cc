#include "collectors/lldp/dot1qaz.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>

#include <algorithm>
#include <optional>
#include <string>

namespace roceqos::lldp {
namespace {

// Length of each TLV's OUI-info (the TLV information string minus the 3-byte OUI and the
// subtype), per IEEE Std 802.1Q-2018 Annex D. A TLV information string holds at most 511 bytes
// (IEEE Std 802.1AB: a 9-bit length), so an OUI-info holds at most 507.
struct TlvPolicy {
  Dot1QazSubtype subtype;
  std::string_view name;
  uint16_t min_len;
  uint16_t max_len;
  uint16_t stride;  // bytes after the first min_len come in records of this size (0: none)
};
inline constexpr uint16_t kMaxOuiInfo = 507;
constexpr TlvPolicy kPolicy[] = {
    // D.2.9: flags octet, Priority Assignment Table (4), TC Bandwidth Table (8), TSA Table (8).
    {Dot1QazSubtype::kEtsConfiguration, "ETS Configuration", 21, 21, 0},
    // D.2.10: reserved octet, then the same three tables.
    {Dot1QazSubtype::kEtsRecommendation, "ETS Recommendation", 21, 21, 0},
    // D.2.11: flags/PFC cap octet, PFC Enable octet.
    {Dot1QazSubtype::kPfcConfiguration, "PFC Configuration", 2, 2, 0},
    // D.2.12: reserved octet, then Application Priority Table entries of 3 octets each.
    {Dot1QazSubtype::kApplicationPriority, "Application Priority", 1, kMaxOuiInfo, 3},
};

const TlvPolicy* PolicyFor(uint8_t subtype) {
  for (const auto& policy : kPolicy)
    if (static_cast<uint8_t>(policy.subtype) == subtype) return &policy;
  return nullptr;
}

uint8_t At(Bytes info, size_t offset) { return static_cast<uint8_t>(info[offset]); }

// Checks `info` against the policy of `subtype` before any field is read.
Result<void> CheckLength(Dot1QazSubtype subtype, Bytes info, std::string_view context) {
  const TlvPolicy& policy = *PolicyFor(static_cast<uint8_t>(subtype));
  if (info.size() < policy.min_len || info.size() > policy.max_len) {
    std::string expected = policy.min_len == policy.max_len
                               ? fmt::format("{}", policy.min_len)
                               : fmt::format("{}-{}", policy.min_len, policy.max_len);
    return MakeError(0, fmt::format("{}: 802.1 {} TLV with {} bytes of OUI info, expected {}",
                                    context, policy.name, info.size(), expected));
  }
  if (policy.stride != 0 && (info.size() - policy.min_len) % policy.stride != 0)
    return MakeError(0,
                     fmt::format("{}: 802.1 {} TLV with {} bytes of OUI info, not {} + a "
                                 "multiple of {}",
                                 context, policy.name, info.size(), policy.min_len, policy.stride));
  return {};
}

// The tables of D.2.9 and D.2.10, starting at `offset` (after the first octet).
Result<EtsTables> DecodeEtsTables(Bytes info, size_t offset, std::string_view context) {
  EtsTables tables;
  // Priority Assignment Table (D.2.9, D.2.10): 4 bits per priority, priority 0 in the high
  // nibble of the first octet. Values 8-15 are reserved, not TCs.
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    uint8_t octet = At(info, offset + prio / 2);
    uint8_t tc = prio % 2 == 0 ? octet >> 4 : octet & 0x0f;
    if (tc >= kNumTcs)
      return MakeError(0, fmt::format("{}: ETS priority {} assigned to reserved TC value {}",
                                      context, prio, tc));
    tables.prio_tc[prio] = tc;
  }
  offset += kNumPriorities / 2;
  // TC Bandwidth Table (D.2.9, D.2.10): percent of the link per TC.
  for (int tc = 0; tc < kNumTcs; ++tc) {
    tables.tc_bandwidth[tc] = At(info, offset + tc);
    if (tables.tc_bandwidth[tc] > 100)
      return MakeError(0, fmt::format("{}: ETS bandwidth of TC {} is {}%", context, tc,
                                      tables.tc_bandwidth[tc]));
  }
  offset += kNumTcs;
  // TSA Assignment Table (D.2.9, D.2.10): one octet per TC, IEEE_8021QAZ_TSA_* values; reserved
  // values are kept as sent (TsaName prints them "unknown").
  for (int tc = 0; tc < kNumTcs; ++tc) tables.tc_tsa[tc] = At(info, offset + tc);
  return tables;
}

}  // namespace

std::vector<uint8_t> ApplicationPriority::DscpPriorities(uint8_t dscp) const {
  std::vector<uint8_t> prios;
  for (const auto& app : entries)
    if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP && app.protocol == dscp)
      prios.push_back(app.priority);
  return prios;
}

Result<EtsConfiguration> DecodeEtsConfiguration(Bytes info, std::string_view context) {
  if (auto ok = CheckLength(Dot1QazSubtype::kEtsConfiguration, info, context); !ok)
    return ok.error();
  EtsConfiguration ets;
  uint8_t flags = At(info, 0);
  ets.willing = (flags & 0x80) != 0;  // D.2.9: Willing, bit 8
  ets.cbs = (flags & 0x40) != 0;      // D.2.9: CBS, bit 7
  uint8_t max_tcs = flags & 0x07;     // D.2.9: Max TCs, bits 3-1; 0 means 8
  ets.max_tcs = max_tcs == 0 ? kNumTcs : max_tcs;
  auto tables = DecodeEtsTables(info, 1, context);
  if (!tables) return tables.error();
  ets.tables = *tables;
  return ets;
}

Result<EtsRecommendation> DecodeEtsRecommendation(Bytes info, std::string_view context) {
  if (auto ok = CheckLength(Dot1QazSubtype::kEtsRecommendation, info, context); !ok)
    return ok.error();
  // D.2.10: the first octet is reserved.
  auto tables = DecodeEtsTables(info, 1, context);
  if (!tables) return tables.error();
  return EtsRecommendation{*tables};
}

Result<PfcConfiguration> DecodePfcConfiguration(Bytes info, std::string_view context) {
  if (auto ok = CheckLength(Dot1QazSubtype::kPfcConfiguration, info, context); !ok)
    return ok.error();
  PfcConfiguration pfc;
  uint8_t flags = At(info, 0);
  pfc.willing = (flags & 0x80) != 0;  // D.2.11: Willing, bit 8
  pfc.mbc = (flags & 0x40) != 0;      // D.2.11: MBC, bit 7
  pfc.cap = flags & 0x0f;             // D.2.11: PFC cap, bits 4-1
  if (pfc.cap > kNumTcs)
    return MakeError(
        0, fmt::format("{}: PFC cap {} exceeds {} traffic classes", context, pfc.cap, kNumTcs));
  pfc.enabled_mask = At(info, 1);  // D.2.11: PFC Enable, bit p (LSB = 0) for priority p
  return pfc;
}

namespace {

// Why one APP entry cannot be used; nullopt when it can.
std::optional<std::string> InvalidAppEntry(const DcbApp& entry, size_t index,
                                           std::string_view context) {
  // D.2.12 Sel: 1 Ethertype, 2-4 TCP/SCTP/UDP/DCCP ports, 5 DSCP; 0, 6 and 7 are reserved.
  if (entry.selector < IEEE_8021QAZ_APP_SEL_ETHERTYPE || entry.selector > IEEE_8021QAZ_APP_SEL_DSCP)
    return fmt::format("{}: APP entry {} has reserved selector {}", context, index, entry.selector);
  if (entry.selector == IEEE_8021QAZ_APP_SEL_DSCP && entry.protocol >= kNumDscp)
    return fmt::format("{}: APP entry {} maps DSCP {}, beyond 63", context, index, entry.protocol);
  return std::nullopt;
}

}  // namespace

Result<ApplicationPriority> DecodeApplicationPriority(Bytes info, std::string_view context) {
  if (auto ok = CheckLength(Dot1QazSubtype::kApplicationPriority, info, context); !ok)
    return ok.error();
  ApplicationPriority app;
  // D.2.12: a reserved octet, then the Application Priority Table: per entry Priority (bits
  // 8-6), reserved (bits 5-4), Sel (bits 3-1), then a 2-octet Protocol ID in network order.
  for (size_t offset = 1; offset + 3 <= info.size(); offset += 3) {
    const uint8_t head = At(info, offset);
    DcbApp entry;
    entry.priority = head >> 5;
    entry.selector = head & 0x07;
    entry.protocol = static_cast<uint16_t>((At(info, offset + 1) << 8) | At(info, offset + 2));
    if (auto invalid = InvalidAppEntry(entry, (offset - 1) / 3, context))
      app.skipped.push_back(std::move(*invalid));
    else
      app.entries.push_back(entry);
  }
  return app;
}

namespace {

template <typename T>
Result<bool> Store(std::optional<T>& slot, Result<T> decoded, std::string_view name,
                   std::string_view context) {
  if (!decoded) return decoded.error();
  if (slot)
    return MakeError(0, fmt::format("{}: second 802.1 {} TLV from one neighbour", context, name));
  slot = std::move(*decoded);
  return true;
}

}  // namespace

Result<bool> AddCustomTlv(Dot1QazState& state, std::span<const uint8_t> oui, uint8_t subtype,
                          Bytes info, std::string_view context) {
  if (!std::equal(oui.begin(), oui.end(), kIeee8021Oui.begin(), kIeee8021Oui.end())) return false;
  const TlvPolicy* policy = PolicyFor(subtype);
  if (policy == nullptr) return false;
  switch (policy->subtype) {
    case Dot1QazSubtype::kEtsConfiguration:
      return Store(state.ets_configuration, DecodeEtsConfiguration(info, context), policy->name,
                   context);
    case Dot1QazSubtype::kEtsRecommendation:
      return Store(state.ets_recommendation, DecodeEtsRecommendation(info, context), policy->name,
                   context);
    case Dot1QazSubtype::kPfcConfiguration:
      return Store(state.pfc_configuration, DecodePfcConfiguration(info, context), policy->name,
                   context);
    case Dot1QazSubtype::kApplicationPriority:
      return Store(state.application_priority, DecodeApplicationPriority(info, context),
                   policy->name, context);
  }
  return false;
}

}  // namespace roceqos::lldp
