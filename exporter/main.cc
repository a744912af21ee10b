// Placeholder entry point; the exporter core replaces it.
#include <cstdio>

#include "exporter/build_info.h"

int main() {
  std::printf("roce_qos_exporter %s (%s)\n", roceqos::kVersion, roceqos::kGitRevision);
  return 0;
}
