#pragma once

// What the sampler derives from one netdev's ethtool string set, once per generation: the
// counters the name mapper recognises (de-duplicated), the unmapped names opted into by
// --collector.ethtool.raw-include, and the link figures' fallback names. Kept out of the generic
// sampler so that it only hands a read over and gets an EthtoolSample back.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/device.h"
#include "collectors/ethtool_map.h"
#include "exporter/core/snapshot.h"
#include "exporter/sampling/sources.h"

namespace roceqos {

class EthtoolMappings {
 public:
  EthtoolMappings(EthtoolNameMapper mapper, std::optional<std::regex> raw_include);

  /// The sample of `netdev` for a read whose names and values agree in number. The mapping is
  /// rebuilt only when the names pointer changed and its content too (a re-read that produced the
  /// same set keeps it); a changed set is counted and logged.
  EthtoolSample Sample(const std::string& netdev, CounterSet counters,
                       std::chrono::nanoseconds read_at);
  /// Drops the mapping of a netdev that left the selection or was re-created.
  void Forget(const std::string& netdev) { mappings_.erase(netdev); }

 private:
  struct Mapping {
    std::shared_ptr<const std::vector<std::string>> names;  // keeps the pointer key alive
    std::shared_ptr<const std::vector<MappedCounter>> mapped;
    std::shared_ptr<const std::vector<uint32_t>> raw_indices;
    uint64_t changes = 0;
    std::shared_ptr<const LinkEthtoolNames> link_names;
  };

  const Mapping& For(const std::string& netdev,
                     const std::shared_ptr<const std::vector<std::string>>& names);
  void Rebuild(Mapping& m, const std::vector<std::string>& names) const;
  std::vector<MappedCounter> MappedUnique(const std::vector<std::string>& names) const;
  std::vector<uint32_t> RawIndices(const std::vector<std::string>& names,
                                   const std::vector<MappedCounter>& mapped) const;

  EthtoolNameMapper mapper_;
  std::optional<std::regex> raw_include_;
  std::unordered_map<std::string, Mapping> mappings_;
};

}  // namespace roceqos
