#include "exporter/sampling/attribution_poller.h"

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "collectors/rdma_consumers.h"
#include "exporter/core/error_reason.h"
#include "exporter/sampling/source_call.h"

namespace roceqos {
namespace {

class KernelAttributionIo final : public AttributionIo {
 public:
  KernelAttributionIo(std::string proc_root, std::string pod_logs_root)
      : proc_root_(std::move(proc_root)), pod_logs_root_(std::move(pod_logs_root)) {}

  Result<void> DumpQps(uint32_t device_index, RdmaQpTally& tally) override {
    if (Result<void> opened = Open(); !opened) return opened.error();
    return dumper_->DumpQps(device_index, tally);
  }
  Result<uint32_t> PortCount(uint32_t device_index) override {
    if (Result<void> opened = Open(); !opened) return opened.error();
    return dumper_->PortCount(device_index);
  }
  Result<std::optional<CgroupOwner>> ReadOwner(uint32_t pid) override {
    return ReadProcCgroupOwner(proc_root_, pid);
  }
  Result<PodNames> ReadPodNames() override { return ReadPodLogDirs(pod_logs_root_); }

 private:
  Result<void> Open() {
    if (dumper_) return {};
    Result<std::unique_ptr<RdmaQpDumper>> opened = RdmaQpDumper::Open();
    if (!opened) return opened.error();
    dumper_ = std::move(*opened);
    return {};
  }

  std::string proc_root_;
  std::string pod_logs_root_;
  std::unique_ptr<RdmaQpDumper> dumper_;
};

/// A roce_workload_qps series' labels after netdev and rdma_device.
using OwnerLabels = std::tuple<std::string, std::string, std::string, std::string, std::string>;

/// (namespace, name) -> pod UID: PodResources names a pod, not its UID.
using PodUids = std::map<std::pair<std::string, std::string>, std::string>;

std::string UidOf(const PodUids& uids, const PodDevice& device) {
  auto found = uids.find({device.pod_namespace, device.pod_name});
  return found == uids.end() ? "" : found->second;
}

std::vector<AttributionGpuRow> GpuRows(const std::vector<PodDevice>& devices, const PodUids& uids) {
  std::set<AttributionGpuRow> rows;
  for (const PodDevice& d : devices) {
    if (!IsGpuResource(d.resource)) continue;
    if (rows.size() >= AttributionPoller::kMaxGpuRows) break;
    rows.insert({d.pod_namespace, d.pod_name, UidOf(uids, d), d.resource, d.device_id});
  }
  return {rows.begin(), rows.end()};
}

/// Each VF under every selected netdev of its PF (a PF selected as itself and as a bond's slave
/// has two).
std::vector<AttributionVfRow> VfRows(const std::vector<PodDevice>& devices, const PodUids& uids,
                                     const std::vector<AttributionTarget>& targets) {
  std::set<std::pair<std::string, std::string>> pf_netdevs;  // (PF PCI address, netdev)
  for (const AttributionTarget& t : targets) {
    if (!t.pci_address.empty()) pf_netdevs.insert({t.pci_address, t.netdev});
  }
  std::set<AttributionVfRow> rows;
  for (const PodDevice& d : devices) {
    if (d.vf_physfn.empty()) continue;
    for (auto it = pf_netdevs.lower_bound({d.vf_physfn, ""});
         it != pf_netdevs.end() && it->first == d.vf_physfn; ++it) {
      if (rows.size() >= AttributionPoller::kMaxVfRows) break;
      rows.insert(
          {it->second, d.pod_namespace, d.pod_name, UidOf(uids, d), d.resource, d.device_id});
    }
  }
  return {rows.begin(), rows.end()};
}

}  // namespace

std::unique_ptr<AttributionIo> MakeKernelAttributionIo(std::string proc_root,
                                                       std::string pod_logs_root) {
  return std::make_unique<KernelAttributionIo>(std::move(proc_root), std::move(pod_logs_root));
}

/// The labels one QP owner gets: kind, workload, pod_namespace, pod_name, pod_uid.
struct AttributionPoller::Owner {
  OwnerLabels labels{"unknown", "", "", "", ""};
};

/// One round's work: the per-PID owner cache and the pod names live for this round only (a PID
/// reused between rounds must not inherit the previous process's owner).
class AttributionPoller::Round {
 public:
  explicit Round(AttributionPoller& poller) : p_(poller) {}

  void Device(uint32_t device_index, const std::vector<AttributionTarget>& targets);
  std::vector<AttributionRow> Rows() const;
  void Allocations(const std::vector<AttributionTarget>& targets, AttributionState& state);

 private:
  const Owner& Resolve(const RdmaQpOwnerKey& key);
  Owner PodOwner(const CgroupOwner& cgroup);
  const PodNames& Names();
  bool SinglePort(uint32_t device_index);

  AttributionPoller& p_;
  std::unordered_map<uint32_t, Owner> by_pid_;
  Owner kernel_;  // scratch for kernel QPs (no cache needed: no read behind them)
  std::optional<PodNames> names_;
  // (netdev, rdma_device) -> owner labels -> QPs
  std::map<std::pair<std::string, std::string>, std::map<OwnerLabels, uint64_t>> counts_;
};

bool AttributionPoller::Round::SinglePort(uint32_t device_index) {
  auto cached = p_.port_counts_.find(device_index);
  if (cached != p_.port_counts_.end()) return cached->second == 1;
  Result<uint32_t> ports = Guard<uint32_t>([&] { return p_.io_->PortCount(device_index); });
  if (!ports) {
    // Unknown: port-0 QPs are left out this round rather than guessed.
    if (ports.error().errnum != ENODEV) {
      CountFailedRead(ports.error(), "attribution ports", p_.errors_, p_.fault_log_);
    }
    return false;
  }
  p_.port_counts_[device_index] = *ports;
  return *ports == 1;
}

void AttributionPoller::Round::Device(uint32_t device_index,
                                      const std::vector<AttributionTarget>& targets) {
  RdmaQpTally tally;
  ++p_.reads_;
  Result<void> dumped = Guard<void>([&] { return p_.io_->DumpQps(device_index, tally); });
  const std::string key = "attribution qp " + targets.front().rdma_device;
  if (!dumped) {
    // ENODEV: unregistered since the sampler's last discovery; gone, not failed. Its rows are
    // simply not rebuilt.
    if (dumped.error().errnum == ENODEV) {
      p_.port_counts_.erase(device_index);
    } else {
      CountFailedRead(dumped.error(), key, p_.errors_, p_.fault_log_);
    }
    return;
  }
  p_.fault_log_.Ok(key);
  std::optional<bool> single_port;
  for (const auto& [owner_key, count] : tally.owners()) {
    // Port 0: a QP not yet bound to a port (created, not yet moved to INIT; the GSI QP on 5.10).
    // Only a one-port device says which netdev it is for.
    if (owner_key.port == 0) {
      if (!single_port) single_port = SinglePort(device_index);
      if (!*single_port) continue;
    }
    const Owner* owner = nullptr;
    for (const AttributionTarget& target : targets) {
      if (owner_key.port != 0 && target.port != owner_key.port) continue;
      if (owner == nullptr) owner = &Resolve(owner_key);
      counts_[{target.netdev, target.rdma_device}][owner->labels] += count.qps;
    }
  }
}

const AttributionPoller::Owner& AttributionPoller::Round::Resolve(const RdmaQpOwnerKey& key) {
  static const Owner kUnknown;
  if (!key.kern_name.empty()) {
    kernel_.labels = {"kernel", key.kern_name, "", "", ""};
    return kernel_;
  }
  if (key.pid == 0) return kUnknown;  // an exiting process: restrack no longer names it
  auto cached = by_pid_.find(key.pid);
  if (cached != by_pid_.end()) return cached->second;
  Owner& owner = by_pid_[key.pid];
  Result<std::optional<CgroupOwner>> read =
      Guard<std::optional<CgroupOwner>>([&] { return p_.io_->ReadOwner(key.pid); });
  if (!read) {
    CountFailedRead(read.error(), "attribution cgroup", p_.errors_, p_.fault_log_);
    return owner;
  }
  if (!*read) return owner;  // exited since the dump
  const CgroupOwner& cgroup = **read;
  switch (cgroup.kind) {
    case CgroupOwnerKind::kPod:
      owner = PodOwner(cgroup);
      break;
    case CgroupOwnerKind::kSlurmJob:
      owner.labels = {"slurm_job", cgroup.slurm_job, "", "", ""};
      break;
    case CgroupOwnerKind::kSystemdUnit:
      owner.labels = {"systemd_unit", cgroup.systemd_unit, "", "", ""};
      break;
    case CgroupOwnerKind::kUnknown:
      break;
  }
  return owner;
}

AttributionPoller::Owner AttributionPoller::Round::PodOwner(const CgroupOwner& cgroup) {
  Owner owner;
  owner.labels = {"pod", cgroup.pod_uid, "", "", cgroup.pod_uid};
  const PodNames& names = Names();
  auto found = names.find(cgroup.pod_uid);
  if (found != names.end()) {
    const PodName& pod = found->second;
    owner.labels = {"pod", pod.pod_namespace + "/" + pod.name, pod.pod_namespace, pod.name,
                    cgroup.pod_uid};
  }
  return owner;
}

const PodNames& AttributionPoller::Round::Names() {
  if (names_) return *names_;
  Result<PodNames> read = Guard<PodNames>([&] { return p_.io_->ReadPodNames(); });
  if (read) {
    p_.fault_log_.Ok("attribution pod log dirs");
    names_ = std::move(*read);
  } else {
    CountFailedRead(read.error(), "attribution pod log dirs", p_.errors_, p_.fault_log_);
    names_.emplace();
  }
  if (p_.pod_names_source_) {
    PodNames named = p_.pod_names_source_();
    // insert_or_assign: the PodResources names win over the log directories'.
    for (auto& [uid, pod] : named) names_->insert_or_assign(uid, std::move(pod));
  }
  return *names_;
}

/// The kubelet's allocations that name something on a NIC: GPUs, and VFs of a selected PF.
void AttributionPoller::Round::Allocations(const std::vector<AttributionTarget>& targets,
                                           AttributionState& state) {
  if (!p_.pod_devices_source_) return;
  Result<std::vector<PodDevice>> devices = p_.pod_devices_source_();
  if (!devices) {
    CountFailedRead(devices.error(), "attribution kubelet", p_.errors_, p_.fault_log_);
    return;
  }
  p_.fault_log_.Ok("attribution kubelet");
  std::erase_if(*devices, [](const PodDevice& d) {
    return !IsGpuResource(d.resource) && d.vf_physfn.empty();
  });
  if (devices->empty()) return;
  // The log directories give the UIDs (listed once per round, shared with the QP owners' names).
  PodUids uids;
  for (const auto& [uid, pod] : Names()) uids[{pod.pod_namespace, pod.name}] = uid;
  state.gpus = GpuRows(*devices, uids);
  state.vfs = VfRows(*devices, uids, targets);
}

std::vector<AttributionRow> AttributionPoller::Round::Rows() const {
  // The cap is per netdev, over all its devices: collect each netdev's owners first.
  struct Entry {
    const std::pair<std::string, std::string>* where;
    const OwnerLabels* labels;
    uint64_t qps;
  };
  std::map<std::string, std::vector<Entry>> by_netdev;
  for (const auto& [where, owners] : counts_) {
    for (const auto& [labels, qps] : owners)
      by_netdev[where.first].push_back({&where, &labels, qps});
  }
  std::map<std::tuple<std::string, std::string, OwnerLabels>, uint64_t> out;
  const Owner unknown;
  for (auto& [netdev, entries] : by_netdev) {
    // Most QPs first; ties in label order, so the cut is the same every round for the same QPs.
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.qps > b.qps; });
    size_t named = 0;
    for (const Entry& e : entries) {
      const bool is_unknown = std::get<0>(*e.labels) == "unknown";
      const bool kept = is_unknown || named++ < kMaxOwnersPerNetdev;
      out[{e.where->first, e.where->second, kept ? *e.labels : unknown.labels}] += e.qps;
    }
  }
  std::vector<AttributionRow> rows;
  rows.reserve(out.size());
  for (const auto& [key, qps] : out) {
    const auto& [netdev, device, labels] = key;
    const auto& [kind, workload, ns, name, uid] = labels;
    rows.push_back({netdev, device, kind, workload, ns, name, uid, qps});
  }
  return rows;
}

bool IsGpuResource(std::string_view resource) {
  return resource.ends_with("/gpu") || resource.starts_with("nvidia.com/mig-");
}

AttributionPoller::AttributionPoller(AttributionPollerOptions options,
                                     std::unique_ptr<AttributionIo> io, Targets targets)
    : options_(options),
      io_(std::move(io)),
      targets_(std::move(targets)),
      thread_(
          "roceqos-attrib", options_.interval, [this] { PollOnce(); },
          LogLostRound(fault_log_, "attribution poller")) {
  for (const auto& reason : kErrorReasonNames) errors_[std::string(reason.name)] = 0;
}

AttributionPoller::~AttributionPoller() { Stop(); }

void AttributionPoller::PollOnce() {
  auto state = std::make_shared<AttributionState>();
  state->interval_seconds = Seconds(options_.interval);
  const std::vector<AttributionTarget> targets =
      targets_ ? targets_() : std::vector<AttributionTarget>{};
  // Device by device, each target once: nldev dumps QPs one device at a time.
  std::map<uint32_t, std::vector<AttributionTarget>> by_device;
  for (const AttributionTarget& t : std::set<AttributionTarget>(targets.begin(), targets.end())) {
    by_device[t.device_index].push_back(t);
  }
  Round round(*this);
  for (const auto& [device_index, device_targets] : by_device) {
    round.Device(device_index, device_targets);
  }
  // Devices gone from the selection: their port counts are not needed again.
  std::erase_if(port_counts_, [&](const auto& entry) { return !by_device.contains(entry.first); });
  state->rows = round.Rows();
  round.Allocations(targets, *state);
  state->reads = reads_;
  state->errors = errors_;
  latest_.Store(std::move(state));
}

void AttributionPoller::Start() { thread_.Start(); }

void AttributionPoller::Stop() { thread_.Stop(); }

}  // namespace roceqos
