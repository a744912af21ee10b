#pragma once

// Whether lldpd's control socket, as this process reaches it, is an old one that lldpd has since
// replaced. A container that mounts the host's socket file (Kubernetes hostPath) keeps the inode
// it was started with: lldpd unlinks its socket on exit and binds a new one at start, so after an
// lldpd restart the mount holds a socket nobody listens on (connect: ECONNREFUSED), while lldpd
// listens again at the same path on the host. Two facts tell that apart from lldpd being gone:
//  - the mounted inode has no name left (stat: st_nlink 0); a path that resolves through the
//    directory tree, as under systemd, always names a linked inode;
//  - a socket of this network namespace listens bound at that path: /proc/net/unix lists the
//    Unix sockets of the reader's network namespace, and the exporter's pod uses the host's
//    (hostNetwork), so it sees the socket the new lldpd bound on the host.
// docs/decisions.md "LLDP: an lldpd restart under Kubernetes".

#include <optional>
#include <string>
#include <string_view>

namespace roceqos::lldp {

/// One line of /proc/net/unix (net/unix/af_unix.c unix_seq_show): a socket and the path it is
/// bound at ("" when unbound, "@..." when abstract).
struct UnixSocketEntry {
  bool listening = false;  // Flags has __SO_ACCEPTCON (<linux/net.h>): listen() was called
  std::string path;
};

/// One line of /proc/net/unix; nullopt for the header or a line that is not one.
std::optional<UnixSocketEntry> ParseUnixSocketLine(std::string_view line);

/// Whether a socket listens bound at `path` in `proc_net_unix` (a /proc/net/unix listing).
bool ListenerBoundAt(const std::string& path, const std::string& proc_net_unix);

/// stat(path) succeeds and names an inode no directory links any more (st_nlink 0).
bool Unlinked(const std::string& path);

/// Both of the above: a refused connect at `path` means "a replaced socket", and a fresh start
/// of the process (a new mount of the path) would reach lldpd.
bool SocketReplaced(const std::string& path, const std::string& proc_net_unix = "/proc/net/unix");

}  // namespace roceqos::lldp
