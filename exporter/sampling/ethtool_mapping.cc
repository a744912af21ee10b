#include "exporter/sampling/ethtool_mapping.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/log_event.h"

namespace roceqos {

EthtoolMappings::EthtoolMappings(EthtoolNameMapper mapper, std::optional<std::regex> raw_include)
    : mapper_(std::move(mapper)), raw_include_(std::move(raw_include)) {}

EthtoolSample EthtoolMappings::Sample(const std::string& netdev, CounterSet counters,
                                      std::chrono::nanoseconds read_at) {
  const Mapping& mapping = For(netdev, counters.names);
  EthtoolSample sample{std::move(counters), mapping.mapped, mapping.raw_indices, mapping.changes,
                       read_at};
  sample.link_names = mapping.link_names;
  return sample;
}

const EthtoolMappings::Mapping& EthtoolMappings::For(
    const std::string& netdev, const std::shared_ptr<const std::vector<std::string>>& names) {
  Mapping& m = mappings_[netdev];
  if (m.names == names) return m;
  const bool same_content = m.names && *m.names == *names;
  const bool first = !m.names;
  m.names = names;
  if (same_content) return m;  // a re-read that produced the same set: keep the mapping
  if (!first) ++m.changes;
  Rebuild(m, *names);
  if (!first) {
    LogEvent(spdlog::level::info, "ethtool string set changed",
             {{"netdev", netdev}, {"statistics", names->size()}, {"mapped", m.mapped->size()}});
  }
  return m;
}

void EthtoolMappings::Rebuild(Mapping& m, const std::vector<std::string>& names) const {
  std::vector<MappedCounter> mapped = MappedUnique(names);
  std::vector<uint32_t> raw = RawIndices(names, mapped);
  m.mapped = std::make_shared<const std::vector<MappedCounter>>(std::move(mapped));
  m.raw_indices = std::make_shared<const std::vector<uint32_t>>(std::move(raw));
  m.link_names = std::make_shared<const LinkEthtoolNames>(MapMlx5LinkNames(names));
}

std::vector<MappedCounter> EthtoolMappings::MappedUnique(
    const std::vector<std::string>& names) const {
  std::vector<MappedCounter> mapped;
  if (mapper_) mapped = mapper_(names);
  // The mapper works on the same vector, but an index past the end would make the renderer read
  // out of bounds: drop it here, once per generation.
  std::erase_if(mapped, [&](const MappedCounter& c) { return c.source_index >= names.size(); });
  // Two names mapped to the same series would make the exposition invalid; keep the first.
  std::vector<MappedCounter> unique;
  unique.reserve(mapped.size());
  for (const MappedCounter& c : mapped) {
    const bool duplicate = std::any_of(unique.begin(), unique.end(), [&](const MappedCounter& u) {
      return u.counter == c.counter && u.direction == c.direction && u.index == c.index;
    });
    if (!duplicate) unique.push_back(c);
  }
  return unique;
}

std::vector<uint32_t> EthtoolMappings::RawIndices(const std::vector<std::string>& names,
                                                  const std::vector<MappedCounter>& mapped) const {
  std::vector<uint32_t> raw;
  if (!raw_include_) return raw;
  std::vector<bool> is_mapped(names.size(), false);
  for (const MappedCounter& c : mapped) is_mapped[c.source_index] = true;
  for (uint32_t i = 0; i < names.size(); ++i) {
    if (!is_mapped[i] && std::regex_match(names[i], *raw_include_)) raw.push_back(i);
  }
  return raw;
}

}  // namespace roceqos
