#include "collectors/lldp/liblldpctl.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace roceqos::lldp {
namespace {

// The SONAME of Debian 12's lldpd 1.0.16 (the library's ABI 4).
constexpr const char* kLibrary = "liblldpctl.so.4";

struct Loaded {
  LldpctlApi api{};
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool Bind(void* handle, const char* symbol, Fn& slot, std::string& why) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (slot == nullptr && why.empty()) why = fmt::format("{}: no symbol {}", kLibrary, symbol);
  return slot != nullptr;
}

Loaded Load() {
  Loaded loaded;
  // Never closed: the functions are used for the life of the process.
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    loaded.why = error != nullptr ? error : fmt::format("{}: cannot be loaded", kLibrary);
    return loaded;
  }
  LldpctlApi& a = loaded.api;
  std::string& why = loaded.why;
  // Every symbol is bound (not stopping at the first missing one), so `why` names the first.
  const bool bound[] = {
      Bind(handle, "lldpctl_new", a.new_conn, why),
      Bind(handle, "lldpctl_release", a.release, why),
      Bind(handle, "lldpctl_last_error", a.last_error, why),
      Bind(handle, "lldpctl_strerror", a.strerror, why),
      Bind(handle, "lldpctl_log_callback", a.log_callback, why),
      Bind(handle, "lldpctl_get_default_transport", a.default_transport, why),
      Bind(handle, "lldpctl_get_interfaces", a.get_interfaces, why),
      Bind(handle, "lldpctl_get_port", a.get_port, why),
      Bind(handle, "lldpctl_atom_get", a.atom_get, why),
      Bind(handle, "lldpctl_atom_get_str", a.atom_get_str, why),
      Bind(handle, "lldpctl_atom_get_buffer", a.atom_get_buffer, why),
      Bind(handle, "lldpctl_atom_get_int", a.atom_get_int, why),
      Bind(handle, "lldpctl_atom_iter", a.atom_iter, why),
      Bind(handle, "lldpctl_atom_iter_next", a.atom_iter_next, why),
      Bind(handle, "lldpctl_atom_iter_value", a.atom_iter_value, why),
      Bind(handle, "lldpctl_atom_dec_ref", a.atom_dec_ref, why),
  };
  loaded.ok = std::all_of(std::begin(bound), std::end(bound), [](bool b) { return b; });
  return loaded;
}

}  // namespace

const LldpctlApi* LoadLldpctl(std::string* why) {
  static const Loaded loaded = Load();
  if (!loaded.ok && why != nullptr) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace roceqos::lldp
