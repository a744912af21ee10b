#pragma once

// A machine of tests/fixtures/gpu_topology: its expected.txt holds the NIC rows of the published
// `nvidia-smi topo -m` matrix. Lines: `gpus <pci_bus_id...>`, `gpu_numa <node...>`, then
// `<netdev> <numa node> <relation per GPU...>`; a node below 0 is unknown.

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace roceqos::testing {

struct PublishedGpuMatrix {
  std::vector<std::string> gpus;
  std::vector<std::optional<int>> gpu_numa;
  std::vector<std::string> netdevs;
  std::vector<std::optional<int>> nic_numa;
  std::vector<std::vector<std::string>> relations;  // [nic][gpu]
};

inline std::optional<int> PublishedNumaNode(const std::string& word) {
  const int node = std::stoi(word);
  return node < 0 ? std::nullopt : std::optional<int>(node);
}

inline PublishedGpuMatrix ReadPublishedGpuMatrix(const std::filesystem::path& file) {
  PublishedGpuMatrix m;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string head, word;
    words >> head;
    std::vector<std::string> rest;
    while (words >> word) rest.push_back(word);
    if (head == "gpus") {
      m.gpus = rest;
    } else if (head == "gpu_numa") {
      for (const std::string& w : rest) m.gpu_numa.push_back(PublishedNumaNode(w));
    } else {
      m.netdevs.push_back(head);
      m.nic_numa.push_back(PublishedNumaNode(rest.at(0)));
      m.relations.emplace_back(rest.begin() + 1, rest.end());
    }
  }
  return m;
}

}  // namespace roceqos::testing
