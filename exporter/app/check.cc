#include "exporter/app/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace roceqos {
namespace {

struct Style {
  bool color;
  std::string Paint(std::string_view text, std::string_view code) const {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};

std::string_view StatusWord(FieldStatus status) {
  switch (status) {
    case FieldStatus::kInSync:
      return "ok";
    case FieldStatus::kDrift:
      return "DRIFT";
    case FieldStatus::kAbsent:
      return "UNVERIFIED";
    case FieldStatus::kFailed:
      return "UNREADABLE";
  }
  return "?";
}

std::string DeviceHeadline(const Device& d) {
  std::string ports;
  for (const auto& p : d.rdma_ports)
    ports += fmt::format("{}{}/{}", ports.empty() ? "" : ",", p.device, p.port);
  return fmt::format("{} ({}{}{}, {})", d.name, DeviceRoleName(d.role),
                     d.pci_address.empty() ? "" : " " + d.pci_address,
                     ports.empty() ? "" : ", " + ports, d.oper_state.empty() ? "?" : d.oper_state);
}

// A field whose source the device lacks is not drift, but the reader must know it was not checked.
std::string UnverifiedNote(size_t unverified) {
  if (unverified == 0) return "";
  return fmt::format(" ({} field{} cannot be verified on this device)", unverified,
                     unverified == 1 ? "" : "s");
}

}  // namespace

int RenderCheckReport(const PolicySet& policy, const std::vector<CheckDevice>& devices, bool color,
                      std::ostream& out) {
  Style style{color};
  out << fmt::format("policy: {}\n", policy.source);
  int drifted = 0, unknown = 0;
  for (const auto& [device, observed] : devices) {
    auto [effective, rule] = policy.Resolve(device);
    DeviceDrift drift = EvaluateDrift(*effective, observed);
    int bad = 0, failed = 0;
    for (const auto& v : drift.fields) {
      bad += v.Drifted();
      failed += v.status == FieldStatus::kFailed;
    }
    std::string verdict =
        bad ? style.Paint(fmt::format("DRIFT in {} of {} fields", bad, drift.fields.size()),
                          "1;31") +
                  UnverifiedNote(drift.Unverifiable())
        : failed ? style.Paint(fmt::format("UNKNOWN ({} unreadable)", failed), "1;33")
                 : style.Paint("in sync", "32") + UnverifiedNote(drift.Unverifiable());
    out << fmt::format("\n{}: {}\n", DeviceHeadline(device), verdict);
    out << fmt::format("  policy rule \"{}\" (fingerprint {}), state fingerprint {}\n", rule,
                       PolicyFingerprint(*effective), StateFingerprint(observed));
    if (drift.fields.empty()) out << "  (the policy checks no field of this device)\n";
    for (const auto& v : drift.fields) {
      std::string word(StatusWord(v.status));
      std::string painted = v.status == FieldStatus::kInSync  ? style.Paint(word, "32")
                            : v.status == FieldStatus::kDrift ? style.Paint(word, "1;31")
                                                              : style.Paint(word, "33");
      if (v.status == FieldStatus::kInSync) {
        out << fmt::format("  {:<10} {:<11} {}\n", QosFieldName(v.field), painted, v.actual);
      } else {
        out << fmt::format("  {:<10} {:<11} expected {}\n  {:<10} {:<11} actual   {}\n",
                           QosFieldName(v.field), painted, v.expected, "", "", v.actual);
        if (!v.impact.empty()) out << fmt::format("  {:<22} why: {}\n", "", v.impact);
      }
    }
    if (bad)
      ++drifted;
    else if (failed)
      ++unknown;
  }
  out << fmt::format("\n{} device{} checked: {} in sync, {} with drift, {} unknown\n",
                     devices.size(), devices.size() == 1 ? "" : "s",
                     devices.size() - static_cast<size_t>(drifted + unknown), drifted, unknown);
  if (devices.empty()) out << "no RoCE device selected (no Mellanox PF, no RDMA-bound netdev)\n";
  if (drifted) return kCheckDrift;
  if (unknown) return kCheckError;
  return kCheckInSync;
}

Result<std::vector<Device>> SelectCheckDevices(const Inventory& inventory,
                                               const std::vector<std::string>& netdevs) {
  std::vector<Device> out;
  if (netdevs.empty()) {
    for (const auto& d : inventory.devices)
      if (SelectedByDefault(d)) out.push_back(d);
  } else {
    for (const auto& name : netdevs) {
      auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                             [&](const Device& d) { return d.name == name; });
      if (it == inventory.devices.end())
        return MakeError(ENODEV, fmt::format("no network device \"{}\"", name));
      out.push_back(*it);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Device& a, const Device& b) { return a.name < b.name; });
  return out;
}

namespace {

Result<PolicySet> LoadCheckPolicy(const CheckOptions& options) {
  if (options.config_path.empty()) return DefaultPolicy();
  return LoadPolicyFile(options.config_path);
}

int PolicyError(const Error& error, std::ostream& err) {
  err << "roce_qos_exporter check: invalid policy, nothing checked: " << error.message << "\n";
  return kCheckError;
}

int CheckWithPolicy(const CheckOptions& options, const PolicySet& policy,
                    const Result<Inventory>& inventory, QosReader& reader, std::ostream& out,
                    std::ostream& err) {
  if (!inventory) {
    err << "roce_qos_exporter check: device discovery failed: " << inventory.error().message
        << "\n";
    return kCheckError;
  }
  auto devices = SelectCheckDevices(*inventory, options.netdevs);
  if (!devices) {
    err << "roce_qos_exporter check: " << devices.error().message << "\n";
    return kCheckError;
  }
  Observed<int> tcp_ecn = reader.ReadTcpEcn();
  std::vector<CheckDevice> read;
  for (const auto& device : *devices)
    read.push_back(CheckDevice{device, ReadObservedQos(reader, device, tcp_ecn)});
  return RenderCheckReport(policy, read, options.color, out);
}

}  // namespace

int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err) {
  Result<PolicySet> policy = LoadCheckPolicy(options);
  if (!policy) return PolicyError(policy.error(), err);
  return CheckWithPolicy(options, *policy, inventory, reader, out, err);
}

int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  // The policy first: an invalid one stops the check before anything is read.
  Result<PolicySet> policy = LoadCheckPolicy(options);
  if (!policy) return PolicyError(policy.error(), err);
  auto reader = KernelQosReader::Open(options.paths, options.configfs_tos);
  if (!reader) {
    err << "roce_qos_exporter check: " << reader.error().message << "\n";
    return kCheckError;
  }
  Discovery discovery(options.paths.sysfs);
  return CheckWithPolicy(options, *policy, discovery.Discover(), **reader, out, err);
}

int RunPolicyShowDefault(std::ostream& out) {
  out << RenderPolicyYaml(DefaultPolicy());
  return 0;
}

}  // namespace roceqos
