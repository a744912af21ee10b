#include "exporter/render/metrics.h"

#include <string>

namespace roceqos {

std::string_view IndexLabel(int index, std::string& storage) {
  static constexpr std::string_view kDigits[] = {"0", "1", "2", "3", "4", "5", "6", "7"};
  if (index >= 0 && index < std::ssize(kDigits)) return kDigits[index];
  storage = std::to_string(index);
  return storage;
}

void RenderSnapshot(const Snapshot* snapshot, const ServingStats* serving, MetricSink& out) {
  if (snapshot != nullptr) {
    RenderEthtoolCounters(*snapshot, out);
    RenderRdmaCounters(*snapshot, out);
    RenderDeviceInfo(*snapshot, out);
    RenderQos(*snapshot, out);
    RenderDerived(*snapshot, out);
    RenderTransceivers(*snapshot, out);
    RenderLldp(*snapshot, out);
    RenderLink(*snapshot, out);
    RenderPcie(*snapshot, out);
    RenderGids(*snapshot, out);
    RenderAttribution(*snapshot, out);
  }
  RenderSelf(snapshot, out);
  if (serving != nullptr) RenderServing(*serving, out);
}

Families RenderSnapshot(const Snapshot* snapshot, const ServingStats* serving) {
  Families families;
  MetricSink sink(families);
  RenderSnapshot(snapshot, serving, sink);
  return families;
}

}  // namespace roceqos
