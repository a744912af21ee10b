#include "collectors/lldp/liblldpctl.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iterator>
#include <mutex>

namespace roceqos::lldp {
namespace {

// The SONAME of Debian 12's lldpd 1.0.16 (the library's ABI 4).
constexpr const char* kLibrary = "liblldpctl.so.4";

// What to dlopen: --lldp.library when given, fixed by the first load.
struct LibraryChoice {
  std::mutex mutex;
  std::string path = kLibrary;
  bool taken = false;  // the first load has read `path`
};
LibraryChoice& Choice() {
  static LibraryChoice choice;
  return choice;
}
std::atomic<bool> load_done{false};

struct Loaded {
  LldpctlApi api{};
  bool ok = false;
  std::string why;
  std::string file;
};

template <typename Fn>
bool Bind(void* handle, const char* symbol, Fn& slot, std::string& why) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (slot == nullptr && why.empty()) why = fmt::format("liblldpctl: no symbol {}", symbol);
  return slot != nullptr;
}

// The loaded object's path as the dynamic linker found it, links resolved.
std::string FileOf(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return {};
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(map->l_name, error);
  return error ? std::string(map->l_name) : real.string();
}

Loaded Load() {
  Loaded loaded;
  std::string path;
  {
    LibraryChoice& choice = Choice();
    std::lock_guard lock(choice.mutex);
    choice.taken = true;
    path = choice.path;
  }
  // Never closed: the functions are used for the life of the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    loaded.why = error != nullptr ? error : fmt::format("{}: cannot be loaded", path);
    return loaded;
  }
  loaded.file = FileOf(handle);
  if (loaded.file.empty()) loaded.file = path;
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

// Loaded once per process, on first use.
const Loaded& Library() {
  static const Loaded loaded = [] {
    Loaded once = Load();
    load_done.store(true);
    return once;
  }();
  return loaded;
}

}  // namespace

const LldpctlApi* LoadLldpctl(std::string* why) {
  const Loaded& loaded = Library();
  if (!loaded.ok && why != nullptr) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

bool UseLldpctlLibrary(std::string path) {
  LibraryChoice& choice = Choice();
  std::lock_guard lock(choice.mutex);
  if (choice.taken) return false;
  choice.path = std::move(path);
  return true;
}

std::string LoadedLldpctlFile() {
  if (!load_done.load()) return {};
  const Loaded& loaded = Library();
  return loaded.ok ? loaded.file : std::string();
}

}  // namespace roceqos::lldp
