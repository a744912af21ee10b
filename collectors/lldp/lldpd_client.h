#pragma once

// Reads what lldpd, the host's LLDP agent, knows about the neighbours of some interfaces, through
// its control socket and liblldpctl. The exporter never opens a packet socket: lldpd receives the
// frames, keeps the 802.1Qaz TLVs it does not decode as custom TLVs, and answers here
// (docs/decisions.md "LLDP: lldpd hands the 802.1Qaz TLVs over as raw bytes").
//
// The connection is the exporter's own socket with send/receive timeouts, handed to liblldpctl
// through its callbacks: a wedged lldpd costs one timeout per query, never a blocked thread, and
// a failed connect keeps its errno (ENOENT or ECONNREFUSED: lldpd is not running; EACCES: the
// process is not in lldpd's group).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/lldp/neighbor.h"

namespace roceqos::lldp {

struct LldpdQuery {
  std::string socket_path;  // empty: liblldpctl's default (lldpctl_get_default_transport)
  std::chrono::milliseconds timeout{2000};  // for each send and each receive
};

/// liblldpctl's default control socket (/run/lldpd.socket on Debian).
std::string DefaultLldpdSocket();

/// One round trip per interface lldpd handles among `interfaces` (plus one to list them). An
/// Error when lldpd cannot be reached or answers garbage; its errnum says why (see above;
/// ETIMEDOUT for a timeout; EPROTO for an answer the loaded liblldpctl cannot decode, or one no
/// healthy lldpd gives, as from an lldpd of another version or build; 0 for another failure).
Result<LldpdView> QueryLldpd(const LldpdQuery& query, const std::vector<std::string>& interfaces);

/// Whether the kernel would accept `name` as a netdev name (dev_valid_name): what every name
/// lldpd lists is, unless its answer was decoded with another layout.
bool PlausibleInterfaceName(std::string_view name);

}  // namespace roceqos::lldp
