#include "collectors/lldp/lldpd_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/utf8.h"
#include "collectors/lldp/liblldpctl.h"

namespace roceqos::lldp {
namespace {

// Every call below runs after QueryLldpd loaded the library.
const LldpctlApi& Lib() { return *LoadLldpctl(nullptr); }

struct AtomUnref {
  void operator()(lldpctl_atom_t* atom) const { Lib().atom_dec_ref(atom); }
};
using Atom = std::unique_ptr<lldpctl_atom_t, AtomUnref>;

struct ConnRelease {
  void operator()(lldpctl_conn_t* conn) const { Lib().release(conn); }
};
using Conn = std::unique_ptr<lldpctl_conn_t, ConnRelease>;

// The socket behind the callbacks; errnum keeps the errno of the last failed send/receive, which
// liblldpctl reduces to LLDPCTL_ERR_CALLBACK_FAILURE.
struct Socket {
  int fd = -1;
  int errnum = 0;
  ~Socket() {
    if (fd >= 0) close(fd);
  }
};

ssize_t SendCallback(lldpctl_conn_t* /*conn*/, const uint8_t* data, size_t length, void* user) {
  auto* socket = static_cast<Socket*>(user);
  const ssize_t sent = send(socket->fd, data, length, MSG_NOSIGNAL);
  if (sent >= 0) return sent;
  socket->errnum = errno == EAGAIN ? ETIMEDOUT : errno;
  return LLDPCTL_ERR_CALLBACK_FAILURE;
}

ssize_t ReceiveCallback(lldpctl_conn_t* /*conn*/, const uint8_t* data, size_t length, void* user) {
  auto* socket = static_cast<Socket*>(user);
  // liblldpctl passes its receive buffer as const; it is the buffer to fill.
  const ssize_t got = recv(socket->fd, const_cast<uint8_t*>(data), length, 0);
  if (got > 0) return got;
  if (got == 0) return LLDPCTL_ERR_EOF;
  socket->errnum = errno == EAGAIN ? ETIMEDOUT : errno;
  return LLDPCTL_ERR_CALLBACK_FAILURE;
}

// The first warning liblldpctl logged during this thread's query: its error codes say only
// "Error while serializing or unserializing data", its warning names the structure that did not
// fit ("data to deserialize is too small (440) for structure lldpd_hardware").
thread_local std::string first_library_warning;

// liblldpctl logs to stderr unless told otherwise; its messages go to the exporter's log.
void ForwardLog(int severity, const char* message) {
  const std::string_view text = message != nullptr ? message : "";
  if (severity <= LOG_WARNING && first_library_warning.empty()) first_library_warning = text;
  spdlog::debug("liblldpctl: {}", text);
}

void RouteLibraryLog() {
  static std::once_flag once;
  std::call_once(once, [] { Lib().log_callback(ForwardLog); });
}

Result<void> Connect(Socket& socket, const std::string& path, std::chrono::milliseconds timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path))
    return MakeError(EINVAL, fmt::format("lldpd socket '{}': not a usable socket path", path));
  std::memcpy(address.sun_path, path.data(), path.size());
  socket.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket.fd < 0)
    return MakeError(errno, fmt::format("lldpd socket {}: socket: {}", path, strerror(errno)));
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  const timeval tv{.tv_sec = micros / 1000000, .tv_usec = micros % 1000000};
  setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(socket.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(socket.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0)
    return MakeError(errno, fmt::format("lldpd socket {}: connect: {}", path, strerror(errno)));
  return {};
}

// An answer this liblldpctl cannot read: EPROTO, which the poller reports as lldpd_incompatible.
Error Incompatible(std::string_view path, std::string_view what, std::string_view detail) {
  return MakeError(EPROTO, fmt::format("lldpd socket {}: {}: liblldpctl {} cannot read lldpd's "
                                       "answer ({}): lldpd is of another version or build than "
                                       "this library (docs/lldp.md \"lldpd of another version\")",
                                       path, what, LoadedLldpctlFile(), detail));
}

// A failed liblldpctl call: the socket's errno when the failure was ours; errnum 0 when lldpd
// declined the request; EPROTO for an answer the library could not decode (a message type it
// does not expect, a structure of another size: lldpd marshals its structures as they are in
// memory, src/marshal.c, and the protocol has no version, src/ctl.h hmsg_type); else errnum 0.
Error QueryError(lldpctl_conn_t* conn, const Socket& socket, std::string_view path,
                 std::string_view what) {
  const lldpctl_error_t code = Lib().last_error(conn);
  if (code == LLDPCTL_ERR_CALLBACK_FAILURE && socket.errnum != 0)
    return MakeError(socket.errnum,
                     fmt::format("lldpd socket {}: {}: {}", path, what, strerror(socket.errnum)));
  if (code == LLDPCTL_ERR_SERIALIZATION) {
    std::string warning = std::exchange(first_library_warning, {});
    // lldpd answers a request it cannot serve (an interface gone since the listing) with an
    // empty NONE message (src/daemon/client.c), which liblldpctl reports as a message of type 0
    // where it expected another; NONE is 0 in every release. Only that is lldpd's refusal.
    if (warning.find("received: 0)") != std::string::npos)
      return MakeError(0,
                       fmt::format("lldpd socket {}: {}: lldpd declined the request", path, what));
    std::string detail = Lib().strerror(code);
    if (!warning.empty()) detail += ": " + warning;
    return Incompatible(path, what, detail);
  }
  return MakeError(0, fmt::format("lldpd socket {}: {}: {}", path, what, Lib().strerror(code)));
}

// A string a switch sent (chassis ID, system name, port ID and description, management address),
// made safe once here for every reader: label values, `check` on a terminal and in JSON, logs.
// lldpd hands over the TLV's bytes as received, and 802.1AB's SnmpAdminString (UTF-8) is only what
// a well-behaved switch sends. Ill-formed UTF-8 becomes U+FFFD and a control character '?' (an
// escape sequence in a system name must not reach a terminal), as module_fields::Ascii does for
// module EEPROM fields. The exposition writer replaces ill-formed UTF-8 in any label value as
// well (exporter/render/text_format.h); this keeps the other readers safe.
std::string Text(lldpctl_atom_t* atom, lldpctl_key_t key) {
  const char* text = Lib().atom_get_str(atom, key);
  if (text == nullptr) return {};
  std::string safe = ValidUtf8(text);
  for (char& c : safe) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return safe;
}

std::vector<uint8_t> Buffer(lldpctl_atom_t* atom, lldpctl_key_t key) {
  size_t length = 0;
  const uint8_t* bytes = Lib().atom_get_buffer(atom, key, &length);
  if (bytes == nullptr) return {};
  return {bytes, bytes + length};
}

// Calls `visit` with every element of a list atom; the element is released after the call.
template <typename Visit>
void ForEach(lldpctl_atom_t* list, Visit&& visit) {
  if (list == nullptr) return;
  for (lldpctl_atom_iter_t* it = Lib().atom_iter(list); it != nullptr;
       it = Lib().atom_iter_next(list, it)) {
    Atom value(Lib().atom_iter_value(list, it));
    if (value) visit(value.get());
  }
}

std::string FirstManagementAddress(lldpctl_atom_t* chassis) {
  std::string first;
  Atom addresses(Lib().atom_get(chassis, lldpctl_k_chassis_mgmt));
  ForEach(addresses.get(), [&](lldpctl_atom_t* address) {
    if (first.empty()) first = Text(address, lldpctl_k_mgmt_ip);
  });
  return first;
}

std::vector<CustomTlv> CustomTlvs(lldpctl_atom_t* neighbor) {
  std::vector<CustomTlv> tlvs;
  Atom list(Lib().atom_get(neighbor, lldpctl_k_custom_tlvs));
  ForEach(list.get(), [&](lldpctl_atom_t* tlv) {
    const long subtype = Lib().atom_get_int(tlv, lldpctl_k_custom_tlv_oui_subtype);
    if (subtype < 0 || subtype > 255) return;
    tlvs.push_back(CustomTlv{.oui = Buffer(tlv, lldpctl_k_custom_tlv_oui),
                             .subtype = static_cast<uint8_t>(subtype),
                             .info = Buffer(tlv, lldpctl_k_custom_tlv_oui_info_string)});
  });
  return tlvs;
}

Neighbor ReadNeighbor(lldpctl_atom_t* remote, std::string_view interface) {
  Neighbor neighbor;
  if (Atom chassis{Lib().atom_get(remote, lldpctl_k_port_chassis)}) {
    neighbor.chassis_id = Text(chassis.get(), lldpctl_k_chassis_id);
    neighbor.system_name = Text(chassis.get(), lldpctl_k_chassis_name);
    neighbor.management_address = FirstManagementAddress(chassis.get());
  }
  neighbor.port_id = Text(remote, lldpctl_k_port_id);
  neighbor.port_description = Text(remote, lldpctl_k_port_descr);
  neighbor.changed_at_unix = Lib().atom_get_int(remote, lldpctl_k_port_age);
  const long ttl = Lib().atom_get_int(remote, lldpctl_k_port_ttl);
  neighbor.ttl_seconds = ttl > 0 ? static_cast<uint32_t>(ttl) : 0;
  // LLDPCTL_ERR_NOT_EXIST (negative) or 0 when the neighbour sent no Maximum Frame Size TLV.
  const long mfs = Lib().atom_get_int(remote, lldpctl_k_port_dot3_mfs);
  if (mfs > 0) neighbor.max_frame_size = static_cast<uint32_t>(mfs);
  AddCustomTlvs(neighbor, CustomTlvs(remote), fmt::format("lldp {}", interface));
  return neighbor;
}

// A failure that is not this port's alone: the connection itself (our socket's errno, or lldpd
// hung up), where asking about the next port would fail the same way, each after a timeout; or
// an answer this library cannot decode (EPROTO), which every port of an lldpd of another
// version gives.
bool FailsTheRound(lldpctl_conn_t* conn, const Socket& socket, const Error& error) {
  const lldpctl_error_t code = Lib().last_error(conn);
  return error.errnum == EPROTO || code == LLDPCTL_ERR_EOF ||
         (code == LLDPCTL_ERR_CALLBACK_FAILURE && socket.errnum != 0);
}

// An Error when the round fails (FailsTheRound); a port lldpd declined is a LocalPort with its
// `error`, so one bad port never hides the others (lldpd declines an interface that vanished
// between the listing and the query, for one).
Result<LocalPort> ReadPort(lldpctl_conn_t* conn, const Socket& socket, std::string_view path,
                           lldpctl_atom_t* interface, std::string_view name) {
  Atom port(Lib().get_port(interface));
  if (!port) {
    Error error = QueryError(conn, socket, path, fmt::format("port {}", name));
    if (FailsTheRound(conn, socket, error)) return error;
    LocalPort unreadable;
    unreadable.error = std::move(error.message);
    return unreadable;
  }
  LocalPort local;
  const long received = Lib().atom_get_int(port.get(), lldpctl_k_rx_cnt);
  local.frames_received = received > 0 ? static_cast<uint64_t>(received) : 0;
  Atom neighbors(Lib().atom_get(port.get(), lldpctl_k_port_neighbors));
  ForEach(neighbors.get(),
          [&](lldpctl_atom_t* remote) { local.neighbors.push_back(ReadNeighbor(remote, name)); });
  return local;
}

// An answer that decoded but cannot come from a healthy lldpd of the library's version: it lists
// only kernel interfaces, so every name is a netdev name. A structure of another layout read
// into this library's would give names that are not.
Result<void> CheckInterfaceNames(lldpctl_atom_t* list, std::string_view path) {
  std::optional<std::string> bad;
  ForEach(list, [&](lldpctl_atom_t* interface) {
    const char* name = Lib().atom_get_str(interface, lldpctl_k_interface_name);
    if (!bad && !PlausibleInterfaceName(name != nullptr ? name : ""))
      bad = ValidUtf8(name != nullptr ? name : "");
  });
  if (!bad) return {};
  return Incompatible(path, "list interfaces",
                      fmt::format("an interface named '{}', not a netdev name", *bad));
}

// Reads the ports of `pending` lldpd handles into `view` on one connection, erasing each from
// `pending` once read; true when it stopped at a port whose answer failed. liblldpctl leaves a
// connection whose answer it could not decode waiting for that answer (the next request fails
// with LLDPCTL_ERR_INVALID_STATE), so the ports after it are asked on a new connection.
Result<bool> ReadPorts(const std::string& path, std::chrono::milliseconds timeout,
                       std::set<std::string>& pending, LldpdView& view) {
  Socket socket;
  if (Result<void> connected = Connect(socket, path, timeout); !connected) return connected.error();
  Conn conn(Lib().new_conn(SendCallback, ReceiveCallback, &socket));
  if (!conn) return MakeError(ENOMEM, fmt::format("lldpd socket {}: lldpctl_new failed", path));
  Atom list(Lib().get_interfaces(conn.get()));
  if (!list) return QueryError(conn.get(), socket, path, "list interfaces");
  if (Result<void> names = CheckInterfaceNames(list.get(), path); !names) return names.error();
  std::optional<Error> failure;
  bool stopped = false;
  ForEach(list.get(), [&](lldpctl_atom_t* interface) {
    const std::string name = Text(interface, lldpctl_k_interface_name);
    if (failure || stopped || !pending.contains(name)) return;
    Result<LocalPort> port = ReadPort(conn.get(), socket, path, interface, name);
    if (!port) {
      failure = port.error();
      return;
    }
    stopped = !port->error.empty();
    pending.erase(name);
    view.ports.emplace(name, std::move(*port));
  });
  if (failure) return *failure;
  return stopped;
}

}  // namespace

bool PlausibleInterfaceName(std::string_view name) {
  // dev_valid_name() in net/core/dev.c: 1 to IFNAMSIZ - 1 bytes, not "." or "..", no '/', ':'
  // or isspace() byte. Exactly the kernel's rule, so a healthy lldpd's list always passes.
  constexpr size_t kIfNameSize = 16;  // IFNAMSIZ, <linux/if.h>
  if (name.empty() || name.size() >= kIfNameSize || name == "." || name == "..") return false;
  return std::ranges::none_of(
      name, [](char c) { return c == '/' || c == ':' || c == ' ' || (c >= '\t' && c <= '\r'); });
}

std::string DefaultLldpdSocket() {
  const LldpctlApi* lib = LoadLldpctl(nullptr);
  // Debian's lldpd default, for messages when the library is missing.
  return lib != nullptr ? lib->default_transport() : "/run/lldpd.socket";
}

Result<LldpdView> QueryLldpd(const LldpdQuery& query, const std::vector<std::string>& interfaces) {
  std::string missing;
  if (LoadLldpctl(&missing) == nullptr)
    return MakeError(ELIBACC, fmt::format("liblldpctl (package lldpd) not loadable: {}", missing));
  RouteLibraryLog();
  first_library_warning.clear();
  const std::string path = query.socket_path.empty() ? DefaultLldpdSocket() : query.socket_path;
  std::set<std::string> pending(interfaces.begin(), interfaces.end());
  LldpdView view;
  // Every pass reads at least one port, so a port lldpd cannot answer for costs one connection
  // more, never a loop.
  for (;;) {
    Result<bool> stopped = ReadPorts(path, query.timeout, pending, view);
    if (!stopped) return stopped.error();
    if (!*stopped) return view;
  }
}

}  // namespace roceqos::lldp
