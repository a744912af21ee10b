#pragma once

// Decoder of the IEEE 802.1Qaz DCBX TLVs a switch advertises in LLDP: the IEEE 802.1
// organizationally specific TLVs (OUI 00-80-C2) of IEEE Std 802.1Q-2018 Annex D, subtypes 9-12.
// lldpd keeps them undecoded as custom TLVs; the input here is what liblldpctl hands over for one
// of them: the OUI, the subtype and the OUI-info bytes (the TLV information string after the OUI
// and the subtype). Pure: no I/O, every length checked before a byte is read, an Error (never an
// exception) for anything malformed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/dcb.h"

namespace roceqos::lldp {

using Bytes = std::span<const std::byte>;

/// IEEE 802.1 OUI (IEEE Std 802.1Q-2018 Annex D).
inline constexpr std::array<uint8_t, 3> kIeee8021Oui = {0x00, 0x80, 0xC2};

/// The 802.1 subtypes decoded here (IEEE Std 802.1Q-2018 Table D-1).
enum class Dot1QazSubtype : uint8_t {
  kEtsConfiguration = 9,      // D.2.9
  kEtsRecommendation = 10,    // D.2.10
  kPfcConfiguration = 11,     // D.2.11
  kApplicationPriority = 12,  // D.2.12
};

/// The three tables ETS Configuration and ETS Recommendation share (D.2.9, D.2.10).
struct EtsTables {
  std::array<uint8_t, kNumPriorities> prio_tc{};  // Priority Assignment Table: TC per priority
  std::array<uint8_t, kNumTcs> tc_bandwidth{};    // TC Bandwidth Table: percent per TC
  std::array<uint8_t, kNumTcs> tc_tsa{};          // TSA Assignment Table: IEEE_8021QAZ_TSA_*

  bool operator==(const EtsTables&) const = default;
};

/// ETS Configuration TLV (D.2.9): what the peer runs.
struct EtsConfiguration {
  bool willing = false;
  bool cbs = false;     // credit-based shaper supported
  uint8_t max_tcs = 0;  // 1-8 (the wire's 0 means 8)
  EtsTables tables;

  bool operator==(const EtsConfiguration&) const = default;
};

/// ETS Recommendation TLV (D.2.10): what the peer asks a willing station to run.
struct EtsRecommendation {
  EtsTables tables;

  bool operator==(const EtsRecommendation&) const = default;
};

/// PFC Configuration TLV (D.2.11).
struct PfcConfiguration {
  bool willing = false;
  bool mbc = false;          // MACsec bypass capability bit
  uint8_t cap = 0;           // TCs that may have PFC at once, 0-8
  uint8_t enabled_mask = 0;  // bit p = PFC on priority p

  bool Enabled(int prio) const { return (enabled_mask >> prio) & 1; }
  bool operator==(const PfcConfiguration&) const = default;
};

/// Application Priority TLV (D.2.12). Entries in the order advertised, as the dcbnl APP entries
/// of collectors/dcb.h so a host table and a switch table compare directly.
struct ApplicationPriority {
  std::vector<DcbApp> entries;
  /// One message per entry left out of `entries` (a reserved selector, a DSCP beyond 63): one
  /// bad entry must not hide the valid ones, which carry the switch's DSCP map.
  std::vector<std::string> skipped;

  /// Priorities the peer maps DSCP `dscp` to (selector 5), in advertised order.
  std::vector<uint8_t> DscpPriorities(uint8_t dscp) const;
  bool operator==(const ApplicationPriority&) const = default;
};

/// Everything decoded from the 802.1Qaz TLVs of one neighbour; empty optionals for TLVs it did not
/// send.
struct Dot1QazState {
  std::optional<EtsConfiguration> ets_configuration;
  std::optional<EtsRecommendation> ets_recommendation;
  std::optional<PfcConfiguration> pfc_configuration;
  std::optional<ApplicationPriority> application_priority;

  bool operator==(const Dot1QazState&) const = default;
};

Result<EtsConfiguration> DecodeEtsConfiguration(Bytes info, std::string_view context);
Result<EtsRecommendation> DecodeEtsRecommendation(Bytes info, std::string_view context);
Result<PfcConfiguration> DecodePfcConfiguration(Bytes info, std::string_view context);
Result<ApplicationPriority> DecodeApplicationPriority(Bytes info, std::string_view context);

/// Folds one custom TLV of a neighbour into `state`. Returns true when the TLV was an 802.1Qaz
/// one and was decoded, false when it is some other OUI or 802.1 subtype (left to others). An
/// Error for a malformed TLV or a second TLV of the same subtype (a DCBX peer sends each once);
/// `state` is unchanged then. `context` names the neighbour in messages ("lldp eth2").
Result<bool> AddCustomTlv(Dot1QazState& state, std::span<const uint8_t> oui, uint8_t subtype,
                          Bytes info, std::string_view context);

}  // namespace roceqos::lldp
