#pragma once

// DCB (IEEE 802.1Qaz) state of one netdev, read with a single RTM_GETDCB/DCB_CMD_IEEE_GET, the
// interface `dcb` and `mlnx_qos` use. Its writes (RTM_SETDCB) are in collectors/dcb_writer.h.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/result.h"
#include "collectors/netlink/attr.h"

namespace roceqos {

namespace netlink {
class Socket;
}

inline constexpr int kNumPriorities = 8;  // IEEE_8021Q_MAX_PRIORITIES
inline constexpr int kNumTcs = 8;         // IEEE_8021QAZ_MAX_TCS
inline constexpr int kNumDscp = 64;

enum class TrustMode : uint8_t { kPcp, kDscp };
inline constexpr EnumName<TrustMode> kTrustModeNames[] = {
    {TrustMode::kPcp, "pcp"},
    {TrustMode::kDscp, "dscp"},
};
std::string_view TrustModeName(TrustMode mode);

/// Transmission selection algorithm of a TC (IEEE_8021QAZ_TSA_*).
enum class Tsa : uint8_t { kStrict = 0, kCbShaper = 1, kEts = 2, kVendor = 255 };
/// The words `dcb ets show` prints.
inline constexpr EnumName<Tsa> kTsaNames[] = {
    {Tsa::kStrict, "strict"},
    {Tsa::kCbShaper, "cbs"},
    {Tsa::kEts, "ets"},
    {Tsa::kVendor, "vendor"},
};
/// The kTsaNames word of an IEEE_8021QAZ_TSA_* value; "unknown" otherwise.
std::string_view TsaName(uint8_t tsa);

/// struct ieee_pfc, minus the stale pause counters (see docs/kernel-interfaces.md §2.3: mlx5 fills
/// requests/indications from a cache only ETHTOOL_GSTATS refreshes; the ethtool collector owns
/// those counters).
struct PfcState {
  uint8_t cap = 0;           // pfc_cap: number of TCs that may have PFC
  uint8_t enabled_mask = 0;  // pfc_en: bit p = PFC on priority p
  uint8_t mbc = 0;           // mbc: MACsec bypass capability
  uint16_t delay = 0;        // delay: cable length in meters on mlx5 (bits in IEEE)

  bool Enabled(int prio) const { return (enabled_mask >> prio) & 1; }
  bool operator==(const PfcState&) const = default;
};

/// struct ieee_ets, all of it, so a read-modify-write SET sends back what was read.
struct EtsState {
  uint8_t willing = 0;
  uint8_t ets_cap = 0;
  uint8_t cbs = 0;
  std::array<uint8_t, kNumTcs> tc_tx_bw{};  // percent per TC
  std::array<uint8_t, kNumTcs> tc_rx_bw{};
  std::array<uint8_t, kNumTcs> tc_tsa{};  // IEEE_8021QAZ_TSA_*
  std::array<uint8_t, kNumPriorities> prio_tc{};
  std::array<uint8_t, kNumTcs> tc_reco_bw{};
  std::array<uint8_t, kNumTcs> tc_reco_tsa{};
  std::array<uint8_t, kNumPriorities> reco_prio_tc{};

  bool operator==(const EtsState&) const = default;
};

/// struct dcbnl_buffer.
struct BufferState {
  std::array<uint8_t, kNumPriorities> prio_buffer{};
  std::array<uint32_t, 8> size{};  // bytes per buffer (DCBX_MAX_BUFFERS)
  uint32_t total_size = 0;

  bool operator==(const BufferState&) const = default;
};

/// struct dcb_app.
struct DcbApp {
  uint8_t selector = 0;  // IEEE_8021QAZ_APP_SEL_* or DCB_APP_SEL_PCP
  uint8_t priority = 0;
  uint16_t protocol = 0;  // DSCP value for selector 5

  bool operator==(const DcbApp&) const = default;
  // clang-tidy 14 reports the literal 0 of the defaulted <=>'s rewritten comparison as a null
  // pointer constant (a false positive of modernize-use-nullptr fixed in later releases).
  auto operator<=>(const DcbApp&) const = default;  // NOLINT(modernize-use-nullptr)
};

/// Everything one IEEE_GET returns. An optional is empty when the kernel omitted the attribute
/// (driver op missing or failing: the kernel drops the attribute silently, §1.6).
struct QosState {
  std::optional<PfcState> pfc;                                // DCB_ATTR_IEEE_PFC
  std::optional<EtsState> ets;                                // DCB_ATTR_IEEE_ETS
  std::optional<std::array<uint64_t, kNumTcs>> maxrate_kbps;  // DCB_ATTR_IEEE_MAXRATE
  std::optional<BufferState> buffer;                          // DCB_ATTR_DCB_BUFFER
  std::vector<DcbApp> apps;                                   // DCB_ATTR_IEEE_APP_TABLE, sorted
  std::optional<std::vector<uint8_t>> app_trust;  // DCB_ATTR_DCB_APP_TRUST_TABLE (v6.2+)
  std::optional<uint8_t> dcbx;                    // DCB_ATTR_DCBX (DCB_CAP_DCBX_* bits)

  /// With an apptrust table, dscp iff it lists the DSCP selector; without one (mlx5), dscp iff
  /// any DSCP APP entry exists: mlx5 switches QPTS trust on the first/last DSCP entry (§2.2).
  TrustMode Trust() const;
  /// Priorities mapped to `dscp` by selector-5 entries (usually one; the core path can hold
  /// several).
  std::vector<uint8_t> DscpPriorities(uint8_t dscp) const;

  bool operator==(const QosState&) const = default;
};

/// DSCP -> the lowest priority the selector-5 entries of `apps` map it to (the one a NIC and
/// roce_qos_dscp_prio use when a table holds several), in any order of `apps`.
std::map<uint16_t, uint8_t> LowestDscpPriorities(const std::vector<DcbApp>& apps);

/// "host", "firmware" or "lld_managed" for a DCB_ATTR_DCBX value; mlx5 reports firmware-controlled
/// DCBX (no HOST bit) and host (HOST bit) modes, mlnx_qos prints "OS controlled" for the latter.
std::string_view DcbxModeName(uint8_t dcbx);

/// Parses the attributes of an RTM_GETDCB/DCB_CMD_IEEE_GET reply (the bytes after struct dcbmsg).
/// Wrong struct sizes, a truncated nest or garbage give an Error naming `netdev`.
Result<QosState> ParseIeeeGetPayload(netlink::Bytes payload, std::string_view netdev);

/// Reads DCB through one rtnetlink socket. Not thread-safe (one per thread). The writes are
/// DcbWriter's (collectors/dcb_writer.h).
class DcbReader {
 public:
  explicit DcbReader(netlink::Socket* socket) : socket_(socket) {}

  /// One IEEE_GET. nullopt when the device has no dcbnl_ops (EOPNOTSUPP: VFs, veth, bonds).
  Result<std::optional<QosState>> Read(std::string_view netdev);

 private:
  netlink::Socket* socket_;
};

}  // namespace roceqos
