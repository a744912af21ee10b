#pragma once

// liblldpctl, loaded at run time. Debian ships liblldpctl.so.4 inside the lldpd package, so
// linking it would make installing the exporter install and start an LLDP daemon on every node.
// The exporter loads it when LLDP is read; a node without lldpd reports that, nothing more
// (docs/decisions.md "LLDP: liblldpctl is loaded at run time").

#include <lldpctl.h>

#include <string>

namespace roceqos::lldp {

/// The liblldpctl functions the client calls, with their prototypes from <lldpctl.h>.
struct LldpctlApi {
  decltype(&::lldpctl_new) new_conn;
  decltype(&::lldpctl_release) release;
  decltype(&::lldpctl_last_error) last_error;
  decltype(&::lldpctl_strerror) strerror;
  decltype(&::lldpctl_log_callback) log_callback;
  decltype(&::lldpctl_get_default_transport) default_transport;
  decltype(&::lldpctl_get_interfaces) get_interfaces;
  decltype(&::lldpctl_get_port) get_port;
  decltype(&::lldpctl_atom_get) atom_get;
  decltype(&::lldpctl_atom_get_str) atom_get_str;
  decltype(&::lldpctl_atom_get_buffer) atom_get_buffer;
  decltype(&::lldpctl_atom_get_int) atom_get_int;
  decltype(&::lldpctl_atom_iter) atom_iter;
  decltype(&::lldpctl_atom_iter_next) atom_iter_next;
  decltype(&::lldpctl_atom_iter_value) atom_iter_value;
  decltype(&::lldpctl_atom_dec_ref) atom_dec_ref;
};

/// The loaded library (once per process; later calls return the same answer). Null when
/// liblldpctl.so.4 or one of its symbols is missing; `why` then says which.
const LldpctlApi* LoadLldpctl(std::string* why);

/// Loads `path` instead of liblldpctl.so.4 from the dynamic linker's search path, e.g. the host
/// lldpd's own library mounted into a container (--lldp.library). Only before the first
/// LoadLldpctl; false (and nothing changes) after it.
bool UseLldpctlLibrary(std::string path);

/// The file the loaded library came from, links resolved (Debian 12's 1.0.16:
/// /usr/lib/x86_64-linux-gnu/liblldpctl.so.4.9.1; Debian 11's 1.0.11 has liblldpctl.so.4.9.0,
/// the same SONAME); empty when none is loaded. It does not load the library.
std::string LoadedLldpctlFile();

}  // namespace roceqos::lldp
