// The capture bundle parser (collectors/capture/tape_bundle.cc): `--replay FILE` reads a file a
// user sent. Anything parses to a bundle or an error; a parsed bundle serializes and parses back to
// the same records, the capture run's policy and flags in its manifest are taken or refused with
// an error (exporter/app/capture.h ApplyCapturedRun, then the policy YAML parsed as a replay
// does), and loading it into the replay tape never crashes.
#include <cstdlib>
#include <string_view>

#include "collectors/capture/tape.h"
#include "collectors/capture/tape_bundle.h"
#include "collectors/sysfs_file.h"
#include "exporter/app/capture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roceqos::tape;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  roceqos::Result<Bundle> bundle = Parse(text);
  if (!bundle) return 0;
  roceqos::Result<Bundle> again = Parse(Serialize(*bundle));
  if (!again || again->meta != bundle->meta || again->netlink.size() != bundle->netlink.size() ||
      again->ioctls.size() != bundle->ioctls.size() || again->fs.size() != bundle->fs.size()) {
    std::abort();
  }
  roceqos::Config config;
  if (roceqos::Result<roceqos::CapturedRun> run = roceqos::ApplyCapturedRun(*bundle, config);
      run && config.policy_yaml) {
    (void)roceqos::LoadConfiguredPolicy(config);
  }
  const std::string first_path = bundle->fs.empty() ? "/sys/x" : bundle->fs.front().path;
  StartReplay(std::move(*bundle));
  (void)roceqos::ReadSmallFile(first_path);
  (void)roceqos::ListRegularFiles(first_path);
  (void)roceqos::ReadLink(first_path);
  Reset();
  return 0;
}
