#pragma once

// The desired QoS policy: an embedded default (the standard lossless RoCEv2 setup) that a YAML
// file can override per field and per device group. Reference: docs/policy.md.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectors/dcb.h"
#include "collectors/device.h"
#include "collectors/host.h"

namespace roceqos {

/// ETS as the policy states it: TSA and bandwidth per TC.
struct EtsPolicy {
  std::array<uint8_t, kNumTcs> tsa{};        // IEEE_8021QAZ_TSA_*
  std::array<uint8_t, kNumTcs> bandwidth{};  // percent; ETS TCs sum to 100, others 0
  bool operator==(const EtsPolicy&) const = default;
};

struct BufferPolicy {
  std::array<uint8_t, kNumPriorities> prio_buffer{};
  std::optional<std::array<uint32_t, 8>> size;  // bytes per buffer; nullopt = sizes unchecked
  bool operator==(const BufferPolicy&) const = default;
};

/// One policy. Every field is optional: nullopt means "unchecked" (no drift series, never
/// remediated).
struct QosPolicy {
  std::optional<TrustMode> trust;
  std::optional<uint8_t> pfc;                           // bitmap of priorities with PFC on; exact
  std::optional<std::map<uint8_t, uint8_t>> dscp_prio;  // DSCP -> priority entries that must exist
  std::optional<std::array<uint8_t, kNumPriorities>> prio_tc;
  std::optional<EtsPolicy> ets;
  std::optional<BufferPolicy> buffer;
  std::optional<uint8_t> roce_tos;  // ToS byte (DSCP << 2 | ECN), e.g. 106 = DSCP 26 + ECT(0)
  std::optional<uint8_t> dcqcn_np;  // bitmap of priorities with the notification point on; exact
  std::optional<uint8_t> dcqcn_rp;  // bitmap of priorities with the reaction point on; exact
  std::optional<int> tcp_ecn;       // net.ipv4.tcp_ecn
  std::optional<uint32_t> mtu;
  // Link facts, observe only (remediation never changes them).
  std::optional<uint32_t> link_speed_min_mbps;  // the negotiated speed must be at least this
  std::optional<uint32_t> sriov_numvfs;         // exactly this many VFs enabled on the PF

  // --- CNP marking and DCQCN parameters (MOFED ecn/roce_np, ecn/roce_rp; docs/policy.md) ---
  std::optional<uint8_t> cnp_dscp;       // ecn/roce_np/cnp_dscp, 0..63
  std::optional<uint8_t> cnp_802p_prio;  // ecn/roce_np/cnp_802p_prio, 0..7
  /// DCQCN rate-control parameters by file name (rpg_ai_rate, ...); a parameter not listed is
  /// unchecked. Empty maps (the embedded default): nothing checked, no dcqcn_params verdict.
  std::map<std::string, uint64_t> dcqcn_rp_params;  // ecn/roce_rp/<name>
  std::map<std::string, uint64_t> dcqcn_np_params;  // ecn/roce_np/<name> (not the CNP marking)
  // --- end CNP/DCQCN block ---

  bool operator==(const QosPolicy&) const = default;
};

// Policy bounds: 10 Tb/s is beyond any Ethernet port; SR-IOV's TotalVFs is 16 bits.
inline constexpr uint32_t kMaxLinkSpeedMbps = 10'000'000;
inline constexpr uint32_t kMaxSriovVfs = 65535;

/// Which devices a rule applies to. Every given criterion must match (AND); at least one is given.
struct PolicyMatch {
  std::optional<std::string> netdev_regex;  // full match against the netdev name
  std::optional<std::string> pci;           // exact PCI address, e.g. 0000:3b:00.0
  std::optional<std::string> rdma_device;   // exact RDMA device name, e.g. mlx5_2

  std::shared_ptr<const std::regex> netdev_compiled;  // compiled once when the file is loaded

  bool Matches(const Device& device) const;
  /// Whether the rule cannot be decided for `device`: it names an RDMA device, the device's RDMA
  /// ports are unknown (Device::rdma_ports_known), and its other criteria match.
  bool Undecidable(const Device& device) const;
  bool operator==(const PolicyMatch& o) const {
    return netdev_regex == o.netdev_regex && pci == o.pci && rdma_device == o.rdma_device;
  }
};

/// A named override of the defaults for the devices a selector matches. `policy` is already
/// merged (defaults, then the rule's keys), so it is the effective policy for those devices.
struct PolicyRule {
  std::string name;
  PolicyMatch match;
  QosPolicy policy;
  int line = 0;  // 1-based line of the rule in its file (for messages)
};

/// The rule name of a device whose policy could not be decided (PolicyResolution::resolved).
inline constexpr std::string_view kUnresolvedRule = "unresolved";

/// Which policy applies to a device, and whether that could be decided at all.
struct PolicyResolution {
  const QosPolicy* policy = nullptr;  // never null: an empty policy for "none" and "unresolved"
  std::string_view rule;              // the rule's name, "default", "none" or kUnresolvedRule
  /// False when a rule tried before the match was decided names an RDMA device and the device's
  /// RDMA ports are unknown: the rule may or may not apply, so neither it nor a later rule nor
  /// the defaults are the effective policy. `policy` is then the empty policy (nothing checked,
  /// nothing written) and `undecided_rule` the rule that could not be evaluated.
  bool resolved = true;
  std::string_view undecided_rule;
};

/// Which ports the file's `defaults` check (top-level key `roce_ports`, docs/policy.md "RoCE
/// ports"). Rules are not affected: a device a rule matches is always checked.
enum class RocePorts : uint8_t {
  kAuto,  // only RoCE ports (ClassifyRocePort, exporter/qos/roce_port.h); the embedded default
  kAll,   // every device the defaults apply to, whatever its state
};
std::string_view RocePortsName(RocePorts mode);  // "auto", "all"

/// The whole policy: defaults plus rules. The first rule whose selector matches a device wins;
/// a device no rule matches gets the defaults if DefaultsApplyTo() it, else nothing is checked.
struct PolicySet {
  QosPolicy defaults;
  std::vector<PolicyRule> rules;
  std::string source;  // "embedded default" or the file path
  RocePorts roce_ports = RocePorts::kAuto;

  /// The effective policy for a device and the rule name that chose it: "default", or "none"
  /// (an empty policy) for a device the defaults do not apply to, or kUnresolvedRule.
  PolicyResolution ResolveChecked(const Device& device) const;
  /// ResolveChecked without the resolved flag (an unresolved device gets the empty policy and
  /// the rule name kUnresolvedRule).
  std::pair<const QosPolicy*, std::string_view> Resolve(const Device& device) const;
};

/// Whether `defaults` apply to a device no rule matches: a Mellanox (0x15b3) physical function,
/// bond members included. VFs, bond masters, Soft-RoCE and other netdevs are checked only by an
/// explicit `devices:` rule.
bool DefaultsApplyTo(const Device& device);

/// The embedded default: trust dscp; PFC on priority 3 only; DSCP 26 and 24 -> 3, DSCP 48 -> 6;
/// RoCE ToS 106; DCQCN NP and RP on priority 3; tcp_ecn 1; CNPs on DSCP 48 and priority 6; ETS,
/// prio_tc, buffer, MTU, the link facts and the DCQCN rate parameters unchecked.
PolicySet DefaultPolicy();

/// Parses and validates a policy document. Any problem rejects the whole document with an Error
/// whose message is "<source>:<line>:<column>: <what>" (one line).
Result<PolicySet> ParsePolicy(std::string_view yaml_text, std::string_view source);
/// The largest policy file read: a fleet's policy with hundreds of rules is tens of KiB, and the
/// bound keeps a runaway file (or one replaced by /dev/zero) from exhausting memory on a reload.
inline constexpr size_t kMaxPolicyFileBytes = size_t{1} << 20;

/// Reads and parses a file (symlinks followed: a ConfigMap mount). An Error naming the path when
/// it cannot be read, is not a regular file (a FIFO would block the reloading thread) or is larger
/// than kMaxPolicyFileBytes.
Result<PolicySet> LoadPolicyFile(const std::string& path);

/// Renders a policy set as YAML that ParsePolicy accepts and that yields an equal set.
std::string RenderPolicyYaml(const PolicySet& policy);
/// Renders one QosPolicy's fields (every field, unchecked ones as null) as a YAML mapping body.
std::string RenderQosPolicyYaml(const QosPolicy& policy, int indent);

/// A short, stable hash (16 hex digits, FNV-1a 64 of the canonical rendering) of one effective
/// policy, so fleets can compare nodes: equal policies give equal fingerprints.
std::string PolicyFingerprint(const QosPolicy& policy);

/// The DCQCN parameter files a policy may name under dcqcn_params.roce_rp / roce_np (MOFED
/// en_ecn.c), with the unit of each value (docs/policy.md "DCQCN parameters").
struct DcqcnParamInfo {
  DcqcnRole role;
  std::string_view name;
  std::string_view unit;
};
std::span<const DcqcnParamInfo> KnownDcqcnParams();
/// "{roce_rp: {rpg_ai_rate: 5}, roce_np: null}", or "null" when no parameter is checked.
std::string DcqcnParamsText(const QosPolicy& policy);

/// Bitmap helpers for the priority lists the YAML uses ("[3]" <-> 0x08).
std::string PriorityListText(uint8_t mask);  // "[3]", "[0, 3]", "[]"

/// "[a, b, ...]": how policies, drift verdicts and the audit log write per-priority/TC arrays.
template <typename T, size_t N>
std::string ArrayText(const std::array<T, N>& values) {
  std::string out = "[";
  for (size_t i = 0; i < N; ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}
/// "[ets, strict, ...]" (TsaName of each TC).
std::string TsaListText(const std::array<uint8_t, kNumTcs>& tsa);

/// FNV-1a 64 of `text` as 16 hex digits: the fingerprints of policies and observed states.
std::string Fnv1a64Hex(std::string_view text);

}  // namespace roceqos
