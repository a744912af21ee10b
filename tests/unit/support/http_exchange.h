#pragma once

#include <string>

namespace roceqos {

/// Sends raw bytes to 127.0.0.1:port and returns everything the server answers until it closes
/// (10 s receive timeout; "" when no socket could be made).
std::string HttpExchange(int port, const std::string& request);

}  // namespace roceqos
