#include "exporter/app/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <ostream>

#include "base/enum_names.h"
#include "base/utf8.h"
#include "collectors/ethtool.h"
#include "collectors/rdma.h"
#include "collectors/roce_gids.h"
#include "exporter/app/check_gids.h"
#include "exporter/qos/roce_port.h"
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
// An unconfigured port (not a RoCE port, docs/policy.md "RoCE ports") counts nothing at all: its
// differences from the defaults are shown, and an unused port need not be ACTIVE.
struct Tally {
  int drift = 0, failed = 0, unverified = 0;
  bool policy_checked = true;
  bool unconfigured = false;
  Tally(const std::vector<CheckItem>& items, bool policy_checks_fields, bool not_a_roce_port)
      : policy_checked(policy_checks_fields), unconfigured(not_a_roce_port) {
    for (const auto& i : items) {
      drift += i.status == FieldStatus::kDrift;
      failed += i.status == FieldStatus::kFailed;
      unverified += i.status == FieldStatus::kAbsent;
    }
  }
  std::string_view Verdict() const {
    if (unconfigured) return "unconfigured";
    if (drift) return "drift";
    if (failed) return "unknown";
    return policy_checked ? "in_sync" : "not_checked";
  }
};

// The summary counts and the exit code over all devices. `checked` counts every selected device
// reported; the other five split it by verdict.
struct Summary {
  int checked = 0, in_sync = 0, drift = 0, unknown = 0, not_checked = 0, unconfigured = 0;
  void Add(const Tally& t) {
    ++checked;
    if (t.unconfigured)
      ++unconfigured;
    else if (t.drift)
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
  // "2 devices: 1 in sync, 1 unconfigured (no RoCE traffic)": only the verdicts that occur.
  std::string Text() const {
    std::string parts;
    auto add = [&parts](int n, std::string_view what) {
      if (n) parts += fmt::format("{}{} {}", parts.empty() ? ": " : ", ", n, what);
    };
    add(in_sync, "in sync");
    add(drift, "with drift");
    add(unknown, "unknown");
    add(unconfigured, "unconfigured (no RoCE traffic)");
    add(not_checked, "not checked (no policy field applies)");
    return fmt::format("{} device{}{}", checked, checked == 1 ? "" : "s", parts);
  }
};

// The longest status word ("UNVERIFIED", "UNREADABLE"): the width of the status column.
constexpr size_t kStatusWidth = 10;

// The text columns: item names as wide as the longest one of the report ("cnp_802p_prio",
// "rdma_port mlx5_0/1", "switch dscp_prio"), then the status word, then the values.
struct Columns {
  size_t item = 10;
  size_t Value() const { return 2 + item + 1 + kStatusWidth + 1; }
};

// The status word of an item. An unconfigured port's differences are not drift: "differs".
std::string_view ItemWord(FieldStatus status, bool unconfigured) {
  if (unconfigured && status == FieldStatus::kDrift) return "differs";
  return StatusWord(status);
}

void RenderItem(const Style& style, const Columns& columns, bool unconfigured, const CheckItem& v,
                std::ostream& out) {
  // Padded before painting: the colour codes take no column.
  const std::string word = fmt::format("{:<{}}", ItemWord(v.status, unconfigured), kStatusWidth);
  std::string painted = v.status == FieldStatus::kInSync ? style.Paint(word, "32")
                        : v.status == FieldStatus::kDrift && !unconfigured
                            ? style.Paint(word, "1;31")
                            : style.Paint(word, "33");
  if (v.status == FieldStatus::kInSync) {
    out << fmt::format("  {:<{}} {} {}\n", v.item, columns.item, painted, v.actual);
    return;
  }
  out << fmt::format("  {:<{}} {} expected {}\n  {:<{}} {:<{}} actual   {}\n", v.item, columns.item,
                     painted, v.expected, "", columns.item, "", kStatusWidth, v.actual);
  if (!v.why.empty()) out << fmt::format("{:<{}}why: {}\n", "", columns.Value(), v.why);
}

std::string TextVerdict(const Style& style, const Tally& t, size_t items) {
  if (t.unconfigured)
    return style.Paint("UNCONFIGURED", "33") +
           fmt::format(" (not a RoCE port; {} of {} items differ from the policy, none counted)",
                       t.drift, items);
  if (t.drift)
    return style.Paint(fmt::format("DRIFT in {} of {} fields", t.drift, items), "1;31") +
           UnverifiedNote(t.unverified);
  if (t.failed) return style.Paint(fmt::format("UNKNOWN ({} unreadable)", t.failed), "1;33");
  if (!t.policy_checked) return style.Paint("not checked (no policy field applies)", "33");
  return style.Paint("in sync", "32") + UnverifiedNote(t.unverified);
}

// JSON string literal (RFC 8259 section 7): quote, backslash and control characters escaped,
// and valid UTF-8 (section 8.1): a netdev name or a policy path may hold any byte.
std::string Json(std::string_view raw) {
  std::string text;
  AppendValidUtf8(text, raw);
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

std::string JsonRocePort(const std::optional<RocePortClass>& port) {
  if (!port) return "null";
  return fmt::format("{{\"checked\":{},\"reason\":{},\"detail\":{}}}",
                     port->checked ? "true" : "false", Json(RocePortReasonName(port->reason)),
                     Json(port->detail));
}

std::string JsonDevice(const Device& d, std::string_view rule, const Tally& tally,
                       const std::optional<RocePortClass>& port,
                       const std::vector<CheckItem>& items) {
  std::string ports = "[";
  for (const auto& p : d.rdma_ports)
    ports += fmt::format("{}{}", ports.size() > 1 ? "," : "",
                         Json(fmt::format("{}/{}", p.device, p.port)));
  ports += "]";
  return fmt::format(
      "{{\"netdev\":{},\"role\":{},\"pci\":{},\"rdma_ports\":{},\"policy_rule\":{},"
      "\"roce_port\":{},\"verdict\":{},\"items\":{}}}",
      Json(d.name), Json(DeviceRoleName(d.role)), Json(d.pci_address), ports, Json(rule),
      JsonRocePort(port), Json(tally.Verdict()), JsonItems(items));
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

// One device's items, its tally and whether the policy checks it as a RoCE port.
struct DeviceReport {
  std::vector<CheckItem> items;
  Tally tally;
  std::optional<RocePortClass> roce_port;  // nullopt: the policy checks no field
};

DeviceReport ReportDevice(const PolicySet& policy, const PolicyResolution& resolution,
                          const CheckDevice& checked) {
  if (!resolution.resolved) {
    std::vector<CheckItem> items{UnresolvedItem(resolution)};
    Tally tally(items, true, false);
    return {std::move(items), tally, std::nullopt};
  }
  const DeviceDrift drift = EvaluateDrift(*resolution.policy, checked.observed);
  std::vector<CheckItem> items = DeviceChecklist(drift, checked.device);
  items.insert(items.end(), checked.switch_items.begin(), checked.switch_items.end());
  items.insert(items.end(), checked.gid_items.begin(), checked.gid_items.end());
  std::optional<RocePortClass> roce_port;
  // One-shot: no memory of earlier runs, so a port is a RoCE port by its state and counters.
  if (!drift.fields.empty())
    roce_port = ClassifyRocePort(
        {resolution.rule, policy.roce_ports, &checked.observed, checked.traffic, {}});
  Tally tally(items, !drift.fields.empty(), roce_port && !roce_port->checked);
  return {std::move(items), tally, std::move(roce_port)};
}

Columns ColumnsFor(const std::vector<DeviceReport>& reports) {
  Columns columns;
  for (const DeviceReport& report : reports)
    for (const CheckItem& item : report.items)
      columns.item = std::max(columns.item, item.item.size());
  return columns;
}

std::string_view AbsenceText(LldpAbsence absence) {
  switch (absence) {
    case LldpAbsence::kPermissionDenied:
      return "lldpd refused the query: this user is not in group _lldpd";
    case LldpAbsence::kLldpdIncompatible:
      return "lldpd's answer cannot be read by this liblldpctl: lldpd is of another version or "
             "build (--lldp.library; docs/lldp.md)";
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

// lldpd's own words when only this port's answer failed, else the reason's text.
std::string AbsenceDetail(const LldpState& lldp, std::string_view netdev, LldpAbsence absence) {
  if (lldp.view)
    if (auto port = lldp.view->ports.find(std::string(netdev));
        port != lldp.view->ports.end() && !port->second.error.empty())
      return port->second.error;
  return std::string(AbsenceText(absence));
}

std::vector<CheckItem> UnverifiedSwitchItems(std::string detail) {
  std::vector<CheckItem> items{
      {"switch", FieldStatus::kAbsent, "an LLDP neighbour", std::move(detail), ""}};
  for (const auto& field : kSwitchFieldNames)
    items.push_back(
        {fmt::format("switch {}", field.name), FieldStatus::kAbsent, "-", "no LLDP neighbour", ""});
  return items;
}

// The switch port the netdev is cabled to. A second neighbour on one port (a hub, a second LLDP
// agent, a misconfigured switch) is a fault of the cabling: only the first is compared.
CheckItem NeighborItem(const LldpState& lldp, std::string_view netdev,
                       const lldp::Neighbor& first) {
  const size_t count = LldpNeighborCount(lldp, netdev);
  if (count <= 1)
    return {"switch", FieldStatus::kInSync, "an LLDP neighbour", DescribeNeighbor(first), ""};
  return {"switch", FieldStatus::kDrift, "one LLDP neighbour",
          fmt::format("{} neighbours; compared: {}", count, DescribeNeighbor(first)),
          "several LLDP agents on one RoCE port: a hub, a second agent or a misconfigured switch; "
          "the switch checks below read only the first (lldpcli show neighbors)"};
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
  if (absence) return UnverifiedSwitchItems(AbsenceDetail(lldp, device.name, *absence));
  const lldp::Neighbor& neighbor = *FindLldpNeighbor(lldp, device.name);
  std::vector<CheckItem> items{NeighborItem(lldp, device.name, neighbor)};
  const FrameDecision frame = DecideFrameTagging(observed, device, RoceGidsOf(lldp, device.name));
  for (const SwitchVerdict& v : CompareWithSwitch(observed, neighbor, frame))
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
  std::vector<PolicyResolution> resolutions;
  std::vector<DeviceReport> reports;
  for (const CheckDevice& checked : devices) {
    resolutions.push_back(policy.ResolveChecked(checked.device));
    reports.push_back(ReportDevice(policy, resolutions.back(), checked));
  }
  const Columns columns = ColumnsFor(reports);
  Summary summary;
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& [items, tally, roce_port] = reports[i];
    summary.Add(tally);
    out << fmt::format("\n{}: {}\n", DeviceHeadline(devices[i].device),
                       TextVerdict(style, tally, items.size()));
    out << fmt::format("  policy rule \"{}\" (fingerprint {}), state fingerprint {}\n",
                       resolutions[i].rule, PolicyFingerprint(*resolutions[i].policy),
                       StateFingerprint(devices[i].observed));
    if (roce_port) out << fmt::format("  {}\n", RocePortText(*roce_port));
    if (tally.unconfigured)
      out << "  (checked once RoCE traffic moves on it or it is configured; a devices: rule "
             "naming it, or roce_ports: all, checks it now: docs/policy.md)\n";
    if (items.empty()) out << "  (the policy checks no field of this device)\n";
    for (const auto& v : items) RenderItem(style, columns, tally.unconfigured, v, out);
  }
  out << fmt::format("\n{}\n", summary.Text());
  return summary.ExitCode();
}

int RenderCheckJson(const PolicySet& policy, const std::vector<CheckDevice>& devices,
                    std::ostream& out) {
  Summary summary;
  std::string list;
  for (const CheckDevice& checked : devices) {
    const PolicyResolution resolution = policy.ResolveChecked(checked.device);
    const auto [items, tally, roce_port] = ReportDevice(policy, resolution, checked);
    summary.Add(tally);
    list += (list.empty() ? "" : ",") +
            JsonDevice(checked.device, resolution.rule, tally, roce_port, items);
  }
  const int code = summary.ExitCode();
  out << fmt::format(
      "{{\"schema_version\":1,\"policy\":{},\"devices\":[{}],\"summary\":{{\"checked\":{},"
      "\"in_sync\":{},\"drift\":{},\"unknown\":{},\"not_checked\":{},\"unconfigured\":{}}},"
      "\"exit_code\":{}}}\n",
      Json(policy.source), list, summary.checked, summary.in_sync, summary.drift, summary.unknown,
      summary.not_checked, summary.unconfigured, code);
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

// The RoCE GIDs decide whether the frame-size item counts a VLAN tag: read, as the daemon's LLDP
// round does, for each netdev whose neighbour advertises a Maximum Frame Size, unless the
// lookup already gave them.
void AddRoceGids(const std::string& sysfs_root, const std::vector<CheckDevice>& devices,
                 LldpState& state) {
  for (const CheckDevice& d : devices) {
    const lldp::Neighbor* neighbor = FindLldpNeighbor(state, d.device.name);
    if (neighbor == nullptr || !neighbor->max_frame_size) continue;
    state.roce_gids.try_emplace(d.device.name, ReadNetdevRoceGids(sysfs_root, d.device.rdma_ports));
  }
}

void AddSwitchItems(const LldpLookup& lookup, const std::string& sysfs_root,
                    std::vector<CheckDevice>& devices) {
  std::vector<std::string> netdevs;
  netdevs.reserve(devices.size());
  for (const CheckDevice& d : devices) netdevs.push_back(d.device.name);
  LldpState state = lookup(netdevs);
  AddRoceGids(sysfs_root, devices, state);
  for (CheckDevice& d : devices) d.switch_items = SwitchChecklist(state, d.device, d.observed);
}

// The counters are read only where they decide something: a port the defaults check in auto
// mode that is at factory defaults (as the daemon does).
bool TrafficDecides(const PolicySet& policy, const CheckDevice& checked) {
  const PolicyResolution resolution = policy.ResolveChecked(checked.device);
  if (!resolution.resolved || resolution.rule != "default") return false;
  if (policy.roce_ports != RocePorts::kAuto) return false;
  const std::optional<std::string> configured = ConfiguredEvidence(checked.observed);
  return configured && configured->empty();
}

// The kernel's RoCE counters of a device: one ETHTOOL_GSTATS (after the names) and one
// RDMA_NLDEV_CMD_STAT_GET per bound RDMA port, the reads of the daemon's sampler.
TrafficLookup KernelTraffic() {
  struct Readers {
    std::unique_ptr<EthtoolIo> io = MakeKernelEthtoolIo();
    EthtoolCollector ethtool{*io};
    std::unique_ptr<RdmaCollector> rdma;
  };
  auto readers = std::make_shared<Readers>();
  if (auto rdma = RdmaCollector::Open()) readers->rdma = std::move(*rdma);
  return [readers](const Device& device) {
    Result<CounterSet> ethtool = readers->ethtool.Sample(device.name);
    std::vector<CounterSet> ports;
    if (readers->rdma)
      for (const RdmaPort& port : device.rdma_ports)
        if (Result<CounterSet> counters = readers->rdma->ReadCounters(port))
          ports.push_back(std::move(*counters));
    std::vector<const CounterSet*> rdma;
    rdma.reserve(ports.size());
    for (const CounterSet& counters : ports) rdma.push_back(&counters);
    return RoceTrafficOf(ethtool ? &*ethtool : nullptr, rdma);
  };
}

int CheckWithPolicy(const CheckOptions& options, const PolicySet& policy,
                    const Result<Inventory>& inventory, QosReader& reader, std::ostream& out,
                    std::ostream& err, const LldpLookup& lldp, const TrafficLookup& traffic,
                    const GidLookup& gids) {
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
  for (const auto& device : *devices) {
    read.push_back(CheckDevice{device, ReadObservedQos(reader, device, tcp_ecn), {}, {}});
    if (traffic && TrafficDecides(policy, read.back())) read.back().traffic = traffic(device);
  }
  if (lldp) AddSwitchItems(lldp, options.paths.sysfs, read);
  if (gids) {
    std::map<std::string, std::vector<CheckItem>> items = gids(*devices);
    for (CheckDevice& d : read) d.gid_items = std::move(items[d.device.name]);
  }
  if (options.json) return RenderCheckJson(policy, read, out);
  return RenderCheckReport(policy, read, options.color, out);
}

}  // namespace

int RunCheckWith(const CheckOptions& options, const Result<Inventory>& inventory, QosReader& reader,
                 std::ostream& out, std::ostream& err, const LldpLookup& lldp,
                 const TrafficLookup& traffic, const GidLookup& gids) {
  Result<PolicySet> policy = LoadCheckPolicy(options);
  if (!policy) return PolicyError(policy.error(), err);
  return CheckWithPolicy(options, *policy, inventory, reader, out, err, lldp, traffic, gids);
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
  return CheckWithPolicy(options, *policy, discovery.Discover(), **reader, out, err, lldp,
                         KernelTraffic(),
                         options.gids ? KernelGidItems(options.paths.sysfs) : GidLookup());
}

int RunPolicyShowDefault(std::ostream& out) {
  out << RenderPolicyYaml(DefaultPolicy());
  return 0;
}

}  // namespace roceqos
