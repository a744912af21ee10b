#include "exporter/core/lldp_state.h"

#include <string>

namespace roceqos {

namespace {

const lldp::LocalPort* FindPort(const LldpState& state, std::string_view netdev) {
  if (!state.view) return nullptr;
  auto port = state.view->ports.find(std::string(netdev));
  return port == state.view->ports.end() ? nullptr : &port->second;
}

}  // namespace

const lldp::Neighbor* FindLldpNeighbor(const LldpState& state, std::string_view netdev) {
  const lldp::LocalPort* port = FindPort(state, netdev);
  if (port == nullptr || port->neighbors.empty()) return nullptr;
  return &port->neighbors.front();
}

size_t LldpNeighborCount(const LldpState& state, std::string_view netdev) {
  const lldp::LocalPort* port = FindPort(state, netdev);
  return port == nullptr ? 0 : port->neighbors.size();
}

std::optional<LldpAbsence> LldpNeighborAbsence(const LldpState& state, std::string_view netdev,
                                               bool link_up) {
  if (!state.view) return state.failure;
  if (FindLldpNeighbor(state, netdev) != nullptr) return std::nullopt;
  // lldpd keeps a neighbour until its TTL ends, even across a link flap, so a present neighbour
  // wins over a down link; without one, a down link explains it better than lldpd's list.
  if (!link_up) return LldpAbsence::kLinkDown;
  const lldp::LocalPort* port = FindPort(state, netdev);
  if (port == nullptr) return LldpAbsence::kNotManaged;
  // lldpd answered the round but not for this port: the fault is this port's alone.
  if (!port->error.empty()) return LldpAbsence::kLldpdError;
  return LldpAbsence::kNoFrame;
}

}  // namespace roceqos
