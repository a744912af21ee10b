#pragma once

// What the LLDP poller (exporter/sampling/lldp_poller.h) publishes: lldpd's view of the selected
// netdevs' neighbours, or why there is none. Plain data beside the snapshot that carries it, so
// render/ and qos/ read it without knowing the poller.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "collectors/lldp/neighbor.h"
#include "collectors/roce_gids.h"

namespace roceqos {

/// Why a netdev shows no LLDP neighbour: the label values of roce_lldp_neighbor_absent_reason.
enum class LldpAbsence : uint8_t {
  kLldpdNotInstalled,  // liblldpctl.so.4 cannot be loaded: the lldpd package is not installed
  kLldpdNotRunning,    // no socket, or nobody listening on it
  kLldpdSocketStale,   // lldpd restarted: it listens on a new socket, this process holds the old
  kPermissionDenied,   // the socket refused the process: not in lldpd's group (_lldpd)
  kLldpdIncompatible,  // an answer liblldpctl cannot decode: lldpd of another version or build
  kLldpdError,         // a timeout or another failure of the query
  kNotManaged,         // lldpd runs but does not handle this interface (its -I pattern, a type)
  kLinkDown,           // the netdev's operstate is not up
  kNoFrame,            // link up, lldpd handles it, no LLDP frame: on mlx5 usually firmware LLDP
};
inline constexpr EnumName<LldpAbsence> kLldpAbsenceNames[] = {
    {LldpAbsence::kLldpdNotInstalled, "lldpd_not_installed"},
    {LldpAbsence::kLldpdNotRunning, "lldpd_not_running"},
    {LldpAbsence::kLldpdSocketStale, "lldpd_socket_stale"},
    {LldpAbsence::kPermissionDenied, "permission_denied"},
    {LldpAbsence::kLldpdIncompatible, "lldpd_incompatible"},
    {LldpAbsence::kLldpdError, "lldpd_error"},
    {LldpAbsence::kNotManaged, "not_managed"},
    {LldpAbsence::kLinkDown, "link_down"},
    {LldpAbsence::kNoFrame, "no_frame"},
};
constexpr std::string_view LldpAbsenceName(LldpAbsence absence) {
  return NameOf(kLldpAbsenceNames, absence);
}

/// Faults of lldpd's answer for one port, counted against that netdev only: the label values of
/// roce_lldp_port_errors_total.
inline constexpr std::string_view kLldpPortUnreadable = "port_unreadable";
inline constexpr std::string_view kLldpMalformedTlv = "malformed_tlv";
inline constexpr std::string_view kLldpMalformedAppEntry = "malformed_app_entry";
inline constexpr std::string_view kLldpPortErrorReasons[] = {kLldpPortUnreadable, kLldpMalformedTlv,
                                                             kLldpMalformedAppEntry};

struct LldpState {
  /// lldpd's answer of the last round; nullopt when the round failed (then `failure` says why).
  std::optional<lldp::LldpdView> view;
  LldpAbsence failure = LldpAbsence::kLldpdError;
  std::string failure_message;
  uint64_t queries = 0;  // rounds since start
  /// Failed rounds by LldpAbsence name (the reasons up to kLldpdError) plus "malformed_tlv"
  /// (802.1Qaz TLVs left out, counted in every round that finds them); every reason is there from
  /// the start.
  std::map<std::string, uint64_t> errors;
  /// Per netdev lldpd handles (among the selected): every kLldpPortErrorReasons name and its count
  /// since the netdev was first handled: ports whose answer failed, TLVs and APP entries skipped.
  std::map<std::string, std::map<std::string, uint64_t, std::less<>>, std::less<>> port_errors;
  double interval_seconds = 0;  // --lldp.interval
  int64_t read_at_unix = 0;     // wall clock of the last round, for the neighbour's age
  /// The RoCE GIDs of each netdev whose neighbour advertises a Maximum Frame Size, read in the
  /// same round (LldpPoller::SetRoceGidReader); the frame-size check decides from them whether
  /// the frames carry a VLAN tag. A netdev missing here was not read: its GIDs are unknown.
  std::map<std::string, Observed<std::vector<RoceGid>>> roce_gids;
  std::string library;  // the liblldpctl file loaded (LoadedLldpctlFile); empty: none
};

/// The neighbour lldpd reports on `netdev` (the first when several: the one compared and shown;
/// LldpNeighborCount says how many there are), or null.
const lldp::Neighbor* FindLldpNeighbor(const LldpState& state, std::string_view netdev);

/// How many neighbours lldpd lists on `netdev` (0 without an answer for it).
size_t LldpNeighborCount(const LldpState& state, std::string_view netdev);

/// Why `netdev` has no neighbour; nullopt when it has one. `link_up`: its operstate is up.
std::optional<LldpAbsence> LldpNeighborAbsence(const LldpState& state, std::string_view netdev,
                                               bool link_up);

}  // namespace roceqos
