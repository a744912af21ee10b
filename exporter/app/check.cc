#include "exporter/app/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <ostream>

#include "base/enum_names.h"
#include "exporter/qos/switch_compare.h"
#include "exporter/sampling/device_selector.h"
#include "exporter/sampling/lldp_poller.h"

namespace roceqos {
namespace {

struct Style {
  bool color;
  std::string Paint(std::string_view text, std::string_view code) const {
    return color ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};

// The two spellings of a verdict: the text report's (shouting what needs a look) and the JSON
// schema's (docs/check.md).
constexpr EnumName<FieldStatus> kStatusWords[] = {{FieldStatus::kInSync, "ok"},
                                                  {FieldStatus::kDrift, "DRIFT"},
                                                  {FieldStatus::kAbsent, "UNVERIFIED"},
                                                  {FieldStatus::kFailed, "UNREADABLE"}};
constexpr EnumName<FieldStatus> kJsonStatuses[] = {{FieldStatus::kInSync, "ok"},
                                                   {FieldStatus::kDrift, "drift"},
                                                   {FieldStatus::kAbsent, "unverified"},
                                                   {FieldStatus::kFailed, "unreadable"}};

std::string_view StatusWord(FieldStatus status) { return NameOf(kStatusWords, status, "?"); }

std::string DeviceHeadline(const Device& d) {
  std::string ports;
  for (const auto& p : d.rdma_ports)
    ports += fmt::format("{}{}/{}", ports.empty() ? "" : ",", p.device, p.port);
  return fmt::format("{} ({}{}{}, {})", d.name, DeviceRoleName(d.role),
                     d.pci_address.empty() ? "" : " " + d.pci_address,
                     ports.empty() ? "" : ", " + ports, OperStateName(d.oper_state));
}

// A field whose source the device lacks is not drift, but the reader must know it was not checked.
std::string UnverifiedNote(size_t unverified) {
  if (unverified == 0) return "";
  return fmt::format(" ({} field{} cannot be verified on this device)", unverified,
                     unverified == 1 ? "" : "s");
}

// enum ib_port_state (include/rdma/ib_verbs.h), carried by RDMA_NLDEV_ATTR_PORT_STATE and shown
// as "4: ACTIVE" in /sys/class/infiniband/<dev>/ports/<p>/state.
enum class IbPortState : uint8_t {
  kNop = 0,
  kDown = 1,
  kInit = 2,
  kArmed = 3,
  kActive = 4,
  kActiveDefer = 5
};
constexpr EnumName<IbPortState> kIbPortStateNames[] = {
    {IbPortState::kNop, "NOP"},       {IbPortState::kDown, "DOWN"},
    {IbPortState::kInit, "INIT"},     {IbPortState::kArmed, "ARMED"},
    {IbPortState::kActive, "ACTIVE"}, {IbPortState::kActiveDefer, "ACTIVE_DEFER"},
};

CheckItem RdmaPortItem(const RdmaPort& port) {
  CheckItem item{fmt::format("rdma_port {}/{}", port.device, port.port), FieldStatus::kInSync,
                 "ACTIVE", "", ""};
  const auto state = static_cast<IbPortState>(port.port_state);
  if (state == IbPortState::kNop) {
    // Older kernels omit RDMA_NLDEV_ATTR_PORT_STATE: nothing to compare, not drift.
    item.status = FieldStatus::kAbsent;
    item.actual = "not reported by the kernel";
    return item;
  }
  item.actual = std::string(NameOf(kIbPortStateNames, state));
  if (state != IbPortState::kActive) {
    item.status = FieldStatus::kDrift;
    item.why = "RoCE traffic cannot use a port that is not ACTIVE (link down or not yet up)";
  }
  return item;
}

// Counts of one device's items, and the verdict they give. A device whose effective policy
// checks no field (rule "none": the defaults do not apply to it) is "not checked", never "in
// sync": nothing was compared. Its RDMA port items still count (a port that is down is drift).
struct Tally {
  int drift = 0, failed = 0, unverified = 0;
  bool policy_checked = true;
  Tally(const std::vector<CheckItem>& items, bool policy_checks_fields)
      : policy_checked(policy_checks_fields) {
    for (const auto& i : items) {
      drift += i.status == FieldStatus::kDrift;
      failed += i.status == FieldStatus::kFailed;
      unverified += i.status == FieldStatus::kAbsent;
    }
  }
  std::string_view Verdict() const {
    if (drift) return "drift";
    if (failed) return "unknown";
    return policy_checked ? "in_sync" : "not_checked";
  }
};

// The summary counts and the exit code over all devices. `checked` counts every selected device
// reported; the other four split it by verdict.
struct Summary {
  int checked = 0, in_sync = 0, drift = 0, unknown = 0, not_checked = 0;
  void Add(const Tally& t) {
    ++checked;
    if (t.drift)
      ++drift;
    else if (t.failed)
      ++unknown;
    else if (!t.policy_checked)
      ++not_checked;
    else
      ++in_sync;
  }
  int ExitCode() const {
    if (checked == 0) return kCheckError;  // nothing selected is never a green
    if (drift) return kCheckDrift;
    if (unknown) return kCheckError;
    return kCheckInSync;
  }
};

void RenderItem(const Style& style, const CheckItem& v, std::ostream& out) {
  std::string word(StatusWord(v.status));
  std::string painted = v.status == FieldStatus::kInSync  ? style.Paint(word, "32")
                        : v.status == FieldStatus::kDrift ? style.Paint(word, "1;31")
                                                          : style.Paint(word, "33");
  if (v.status == FieldStatus::kInSync) {
    out << fmt::format("  {:<10} {:<11} {}\n", v.item, painted, v.actual);
    return;
  }
  out << fmt::format("  {:<10} {:<11} expected {}\n  {:<10} {:<11} actual   {}\n", v.item, painted,
                     v.expected, "", "", v.actual);
  if (!v.why.empty()) out << fmt::format("  {:<22} why: {}\n", "", v.why);
}

std::string TextVerdict(const Style& style, const Tally& t, size_t items) {
  if (t.drift)
    return style.Paint(fmt::format("DRIFT in {} of {} fields", t.drift, items), "1;31") +
           UnverifiedNote(t.unverified);
  if (t.failed) return style.Paint(fmt::format("UNKNOWN ({} unreadable)", t.failed), "1;33");
  if (!t.policy_checked) return style.Paint("not checked (no policy field applies)", "33");
  return style.Paint("in sync", "32") + UnverifiedNote(t.unverified);
}

// JSON string literal (RFC 8259 section 7): quote, backslash and control characters escaped.
std::string Json(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string_view JsonStatus(FieldStatus status) {
  return NameOf(kJsonStatuses, status, "unreadable");
}

std::string JsonItems(const std::vector<CheckItem>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& v = items[i];
    out += fmt::format("{}{{\"item\":{},\"status\":{},\"expected\":{},\"actual\":{},\"why\":{}}}",
                       i ? "," : "", Json(v.item), Json(JsonStatus(v.status)), Json(v.expected),
                       Json(v.actual), Json(v.why));
  }
  return out + "]";
}

std::string JsonDevice(const Device& d, std::string_view rule, const Tally& tally,
                       const std::vector<CheckItem>& items) {
  std::string ports = "[";
  for (const auto& p : d.rdma_ports)
    ports += fmt::format("{}{}", ports.size() > 1 ? "," : "",
                         Json(fmt::format("{}/{}", p.device, p.port)));
  ports += "]";
  return fmt::format(
      "{{\"netdev\":{},\"role\":{},\"pci\":{},\"rdma_ports\":{},\"policy_rule\":{},"
      "\"verdict\":{},\"items\":{}}}",
      Json(d.name), Json(DeviceRoleName(d.role)), Json(d.pci_address), ports, Json(rule),
      Json(tally.Verdict()), JsonItems(items));
}

// A device whose policy rule could not be evaluated has no effective policy to check against: one
// unreadable item says why, so it counts as unknown (exit 2) rather than in sync or drifted.
CheckItem UnresolvedItem(const PolicyResolution& resolution) {
  return {"policy", FieldStatus::kFailed, "a policy rule decided for this device",
          fmt::format("rule \"{}\" matches on rdma_device and this device's RDMA ports are unknown "
                      "(the RDMA port listing failed)",
                      resolution.undecided_rule),
          "rules are tried in order, so neither this rule nor a later one nor the defaults can be "
          "chosen; no field is checked until the RDMA ports are listed again"};
}

// One device's items and its tally.
struct DeviceReport {
  std::vector<CheckItem> items;
  Tally tally;
};

DeviceReport ReportDevice(const PolicyResolution& resolution, const CheckDevice& checked) {
  if (!resolution.resolved) {
    std::vector<CheckItem> items{UnresolvedItem(resolution)};
    Tally tally(items, true);
    return {std::move(items), tally};
  }
  const DeviceDrift drift = EvaluateDrift(*resolution.policy, checked.observed);
  std::vector<CheckItem> items = DeviceChecklist(drift, checked.device);
  items.insert(items.end(), checked.switch_items.begin(), checked.switch_items.end());
  Tally tally(items, !drift.fields.empty());
  return {std::move(items), tally};
}

std::string_view AbsenceText(LldpAbsence absence) {
  switch (absence) {
    case LldpAbsence::kPermissionDenied:
      return "lldpd refused the query: this user is not in group _lldpd";
    case LldpAbsence::kLldpdError:
      return "lldpd did not answer in time or answered garbage";
    case LldpAbsence::kNotManaged:
      return "lldpd does not handle this interface (its -I pattern or the interface type)";
    case LldpAbsence::kLinkDown:
      return "the link is down";
    case LldpAbsence::kNoFrame:
      return "no LLDP frame received on a link that is up (on mlx5, firmware LLDP/DCBX may "
             "consume the frames: mlxconfig LLDP_NB_RX_MODE, LLDP_NB_DCBX; docs/lldp.md)";
    default:
      return "lldpd is not available";
  }
}

std::vector<CheckItem> UnverifiedSwitchItems(LldpAbsence absence) {
  std::vector<CheckItem> items{
      {"switch", FieldStatus::kAbsent, "an LLDP neighbour", std::string(AbsenceText(absence)), ""}};
  for (const auto& field : kSwitchFieldNames)
    items.push_back(
        {fmt::format("switch {}", field.name), FieldStatus::kAbsent, "-", "no LLDP neighbour", ""});
  return items;
}

// Every selected netdev's lldpd answer, once (RunCheck's LldpLookup).
LldpState QueryLldpdOnce(const lldp::LldpdQuery& query, const std::vector<std::string>& netdevs) {
  LldpState state;
  Result<lldp::LldpdView> answer = lldp::QueryLldpd(query, netdevs);
  state.read_at_unix = std::time(nullptr);
  if (answer) {
    state.view = std::move(*answer);
  } else {
    state.failure = LldpQueryFailure(answer.error());
    state.failure_message = answer.error().message;
  }
  return state;
}

}  // namespace

std::vector<CheckItem> SwitchChecklist(const LldpState& lldp, const Device& device,
                                       const ObservedQos& observed) {
  const std::optional<LldpAbsence> absence =
      LldpNeighborAbsence(lldp, device.name, device.oper_state == OperState::kUp);
  if (absence == LldpAbsence::kLldpdNotInstalled || absence == LldpAbsence::kLldpdNotRunning)
    return {};
  if (absence) return UnverifiedSwitchItems(*absence);
  const lldp::Neighbor& neighbor = *FindLldpNeighbor(lldp, device.name);
  std::vector<CheckItem> items{
      {"switch", FieldStatus::kInSync, "an LLDP neighbour", DescribeNeighbor(neighbor), ""}};
  for (const SwitchVerdict& v : CompareWithSwitch(observed, neighbor))
    items.push_back({fmt::format("switch {}", SwitchFieldName(v.field)), v.status, v.switch_side,
                     v.host, v.why});
  return items;
}

std::vector<CheckItem> DeviceChecklist(const DeviceDrift& drift, const Device& device) {
  std::vector<CheckItem> items;
  for (const auto& v : drift.fields)
    items.push_back(
        CheckItem{std::string(QosFieldName(v.field)), v.status, v.expected, v.actual, v.impact});
  for (const auto& port : device.rdma_ports) items.push_back(RdmaPortItem(port));
  return items;
}

int RenderCheckReport(const PolicySet& policy, const std::vector<CheckDevice>& devices, bool color,
                      std::ostream& out) {
  Style style{color};
  out << fmt::format("policy: {}\n", policy.source);
  Summary summary;
  for (const CheckDevice& checked : devices) {
    const auto& [device, observed, switch_items] = checked;
    const PolicyResolution resolution = policy.ResolveChecked(device);
    const auto [items, tally] = ReportDevice(resolution, checked);
    summary.Add(tally);
    out << fmt::format("\n{}: {}\n", DeviceHeadline(device),
                       TextVerdict(style, tally, items.size()));
    out << fmt::format("  policy rule \"{}\" (fingerprint {}), state fingerprint {}\n",
                       resolution.rule, PolicyFingerprint(*resolution.policy),
                       StateFingerprint(observed));
    if (items.empty()) out << "  (the policy checks no field of this device)\n";
    for (const auto& v : items) RenderItem(style, v, out);
  }
  out << fmt::format(
      "\n{} device{} checked: {} in sync, {} with drift, {} unknown, {} not checked\n",
      summary.checked, summary.checked == 1 ? "" : "s", summary.in_sync, summary.drift,
      summary.unknown, summary.not_checked);
  return summary.ExitCode();
}

int RenderCheckJson(const PolicySet& policy, const std::vector<CheckDevice>& devices,
                    std::ostream& out) {
  Summary summary;
  std::string list;
  for (const CheckDevice& checked : devices) {
    const PolicyResolution resolution = policy.ResolveChecked(checked.device);
    const auto [items, tally] = ReportDevice(resolution, checked);
    summary.Add(tally);
    list += (list.empty() ? "" : ",") + JsonDevice(checked.device, resolution.rule, tally, items);
  }
  const int code = summary.ExitCode();
  out << fmt::format(
      "{{\"schema_version\":1,\"policy\":{},\"devices\":[{}],\"summary\":{{\"checked\":{},"
      "\"in_sync\":{},\"drift\":{},\"unknown\":{},\"not_checked\":{}}},\"exit_code\":{}}}\n",
      Json(policy.source), list, summary.checked, summary.in_sync, summary.drift, summary.unknown,
      summary.not_checked, code);
  return code;
}

Result<std::vector<Device>> SelectCheckDevices(const Inventory& inventory,
                                               const CheckSelection& selection) {
  std::vector<Device> out;
  if (selection.netdevs.empty()) {
    DeviceSelector selector(SelectedByDefault, selection.include, selection.exclude);
    for (const auto& d : inventory.devices)
      if (selector.Selected(d)) out.push_back(d);
  } else {
    for (const auto& name : selection.netdevs) {
      auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                             [&](const Device& d) { return d.name == name; });
      if (it == inventory.devices.end())
        return MakeError(ENODEV, fmt::format("no network device \"{}\"", name));
      if (std::none_of(out.begin(), out.end(), [&](const Device& d) { return d.name == name; }))
        out.push_back(*it);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Device& a, const Device& b) { return a.name < b.name; });
  return out;
}

namespace {

Result<PolicySet> LoadCheckPolicy(const CheckOptions& options) {
  if (options.policy_yaml) return ParsePolicy(*options.policy_yaml, options.config_path);
  if (options.config_path.empty()) return DefaultPolicy();
  return LoadPolicyFile(options.config_path);
}

int PolicyError(const Error& error, std::ostream& err) {
  err << "roce_qos_exporter check: invalid policy, nothing checked: " << error.message << "\n";
  return kCheckError;
}

// An empty selection is an error (exit 2), never a green "0 devices checked".
std::string NothingSelected(const CheckSelection& selection, size_t candidates) {
  std::string how = "no Mellanox PF, no RDMA-bound netdev";
  if (!selection.include_text.empty())
    how =
        fmt::format("no netdev matches --collector.device-include=\"{}\"", selection.include_text);
  if (!selection.exclude_text.empty())
    how += fmt::format(" after --collector.device-exclude=\"{}\"", selection.exclude_text);
  return fmt::format(
      "roce_qos_exporter check: no RoCE device selected ({}; {} netdev{} seen; see "
      "--collector.device-include)\n",
      how, candidates, candidates == 1 ? "" : "s");
}

void AddSwitchItems(const LldpLookup& lookup, std::vector<CheckDevice>& devices) {
  std::vector<std::string> netdevs;
  netdevs.reserve(devices.size());
  for (const CheckDevice& d : devices) netdevs.push_back(d.device.name);
  const LldpState state = lookup(netdevs);
  for (CheckDevice& d : devices) d.switch_items = SwitchChecklist(state, d.device, d.observed);
}

int CheckWithPolicy(const CheckOptions& options, const PolicySet& policy,
                    const Result<Inventory>& inventory, QosReader& reader, std::ostream& out,
                    std::ostream& err, const LldpLookup& lldp) {
  if (!inventory) {
    err << "roce_qos_exporter check: device discovery failed: " << inventory.error().message
        << "\n";
    return kCheckError;
  }
  auto devices = SelectCheckDevices(*inventory, options.selection);
  if (!devices) {
    err << "roce_qos_exporter check: " << devices.error().message << "\n";
    return kCheckError;
  }
  if (devices->empty()) err << NothingSelected(options.selection, inventory->devices.size());
  Observed<int> tcp_ecn = reader.ReadTcpEcn();
  std::vector<CheckDevice> read;
  for (const auto& device : *devices)
    read.push_back(CheckDevice{device, ReadObservedQos(reader, device, tcp_ecn), {}});
  if (lldp) AddSwitchItems(lldp, read);
  if (options.json) return RenderCheckJson(policy, read, out);
  return RenderCheckReport(policy, read, options.color, out);
}

}  // namespace

int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err, const LldpLookup& lldp) {
  Result<PolicySet> policy = LoadCheckPolicy(options);
  if (!policy) return PolicyError(policy.error(), err);
  return CheckWithPolicy(options, *policy, inventory, reader, out, err, lldp);
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
  LldpLookup lldp;
  if (options.lldp)
    lldp = [&options](const std::vector<std::string>& netdevs) {
      return QueryLldpdOnce(options.lldp_query, netdevs);
    };
  return CheckWithPolicy(options, *policy, discovery.Discover(), **reader, out, err, lldp);
}

int RunPolicyShowDefault(std::ostream& out) {
  out << RenderPolicyYaml(DefaultPolicy());
  return 0;
}

}  // namespace roceqos
