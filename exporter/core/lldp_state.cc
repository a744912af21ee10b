#include "exporter/core/lldp_state.h"

#include <string>

namespace roceqos {

const lldp::Neighbor* FindLldpNeighbor(const LldpState& state, std::string_view netdev) {
  if (!state.view) return nullptr;
  auto port = state.view->ports.find(std::string(netdev));
  if (port == state.view->ports.end() || port->second.neighbors.empty()) return nullptr;
  return &port->second.neighbors.front();
}

std::optional<LldpAbsence> LldpNeighborAbsence(const LldpState& state, std::string_view netdev,
                                               bool link_up) {
  if (!state.view) return state.failure;
  if (FindLldpNeighbor(state, netdev) != nullptr) return std::nullopt;
  // lldpd keeps a neighbour until its TTL ends, even across a link flap, so a present neighbour
  // wins over a down link; without one, a down link explains it better than lldpd's list.
  if (!link_up) return LldpAbsence::kLinkDown;
  if (!state.view->ports.contains(std::string(netdev))) return LldpAbsence::kNotManaged;
  return LldpAbsence::kNoFrame;
}

}  // namespace roceqos
