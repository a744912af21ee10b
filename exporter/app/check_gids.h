#pragma once

// The `check` subcommand's RoCE v2 GID items (docs/check.md, docs/gids.md): the daemon's check
// (exporter/sampling/gid_check.h) run once. Per device with an RDMA port bound to it: one item
// `gids` when every address has its RoCE v2 GID, else one item `gids <address>` per address
// without one (drift, naming the netdev and the reason). A device without its own RDMA port has
// no item; a dump or table that cannot be read makes the item unknown (failed).

#include <map>
#include <string>
#include <vector>

#include "collectors/addresses.h"
#include "collectors/device.h"
#include "exporter/app/check.h"
#include "exporter/sampling/gid_check.h"

namespace roceqos {

/// The items of `devices` from one round (`dump_error`: why the address dump failed, else empty).
std::map<std::string, std::vector<CheckItem>> GidCheckItems(const std::vector<Device>& devices,
                                                            const GidRound& round,
                                                            const std::string& dump_error);

/// The kernel's: one RTM_GETADDR dump, the GID tables under `sysfs_root`.
GidLookup KernelGidItems(std::string sysfs_root);

}  // namespace roceqos
