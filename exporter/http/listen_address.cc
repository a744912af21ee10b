#include "exporter/http/listen_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cerrno>
#include <charconv>

namespace roceqos {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return MakeError(EINVAL, fmt::format("invalid --web.listen-address \"{}\": {}", text, why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return invalid("expected [host]:port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return invalid("port must be a number 0..65535");
  }
  ListenAddress address;
  address.port = static_cast<uint16_t>(port);
  if (host.empty()) {
    address.dual_stack = true;
    return address;
  }
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return invalid("an IPv6 host must be in [brackets]");
    address.host = host.substr(1, host.size() - 2);
    in6_addr parsed{};
    if (inet_pton(AF_INET6, address.host.c_str(), &parsed) != 1) {
      return invalid("not a numeric IPv6 address (zone ids such as %eth0 are not supported)");
    }
    address.family = AF_INET6;
    address.dual_stack = IN6_IS_ADDR_UNSPECIFIED(&parsed);
    return address;
  }
  address.host = host == "localhost" ? "127.0.0.1" : std::string(host);
  in_addr parsed{};
  if (inet_pton(AF_INET, address.host.c_str(), &parsed) != 1) {
    return invalid(
        "host must be an IPv4 address, an IPv6 address in [brackets], \"localhost\" or empty "
        "(every interface)");
  }
  address.family = AF_INET;
  return address;
}

std::string FormatListenAddress(const ListenAddress& address) {
  if (address.family == AF_INET6) return fmt::format("[{}]:{}", address.host, address.port);
  return fmt::format("{}:{}", address.host, address.port);
}

}  // namespace roceqos
