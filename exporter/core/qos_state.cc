#include "exporter/core/qos_state.h"

#include <algorithm>

namespace roceqos {

bool DeviceDrift::InSync() const {
  return std::all_of(fields.begin(), fields.end(), [](const FieldVerdict& v) {
    return v.status == FieldStatus::kInSync || v.status == FieldStatus::kAbsent;
  });
}

size_t DeviceDrift::Unverifiable() const {
  return static_cast<size_t>(std::count_if(fields.begin(), fields.end(), [](const FieldVerdict& v) {
    return v.status == FieldStatus::kAbsent;
  }));
}

const FieldVerdict* DeviceDrift::Find(QosField field) const {
  for (const auto& v : fields)
    if (v.field == field) return &v;
  return nullptr;
}

}  // namespace roceqos
