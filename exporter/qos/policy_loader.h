#pragma once

// Loading the policy the daemon enforces: --config's file (or the embedded default) as one
// PolicySet, refused whole when it changed while it was read. The engine only installs what this
// returns (QosEngine::ReloadPolicy); parsing and validation are policy.h's. docs/policy.md.

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "exporter/qos/policy.h"

namespace roceqos {

/// Loads the policy named by --config (or the embedded default). Used at start-up, where an
/// invalid policy refuses to start, and by reloads. A file that changed while it was read is
/// refused (EAGAIN). `after_read` runs between the read and the second look at the file: the seam
/// through which a test rewrites the file at exactly that moment.
Result<std::shared_ptr<const PolicySet>> LoadPolicy(const std::string& config_path,
                                                    const std::function<void()>& after_read = {});

}  // namespace roceqos
