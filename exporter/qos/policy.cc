#include "exporter/qos/policy.h"

#include <fmt/format.h>
#include <linux/dcbnl.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

#include "base/regex_text.h"
#include "base/regular_file.h"
#include "exporter/qos/qos_fields.h"

namespace roceqos {
namespace {

// Internal unwinding from deep inside the document to ParsePolicy, which turns it into an Error.
struct PolicyError {
  YAML::Mark mark;
  std::string what;
};

[[noreturn]] void Fail(const YAML::Node& node, std::string what) {
  throw PolicyError{node.Mark(), std::move(what)};
}

std::string_view NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return node.Tag() == "?" ? "a plain scalar" : "a string";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "nothing";
  }
}

// `null`, `~`, an empty value or the word `unchecked` switch a check off.
bool IsUnchecked(const YAML::Node& node) {
  return node.IsNull() || (node.IsScalar() && node.Tag() == "?" && node.Scalar() == "unchecked");
}

int64_t ParseInt(const YAML::Node& node, int64_t lo, int64_t hi, std::string_view what) {
  // Quoted scalars are strings: "3" where 3 is meant is a type error, not silently accepted.
  if (!node.IsScalar() || node.Tag() != "?")
    Fail(node, fmt::format("{} must be an integer, got {}", what, NodeKind(node)));
  const std::string& text = node.Scalar();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    Fail(node, fmt::format("{} must be an integer, got \"{}\"", what, text));
  if (ec == std::errc::result_out_of_range || value < lo || value > hi)
    Fail(node, fmt::format("{} {} is out of range {}..{}", what, text, lo, hi));
  return value;
}

std::string ParseString(const YAML::Node& node, std::string_view what) {
  if (!node.IsScalar())
    Fail(node, fmt::format("{} must be a string, got {}", what, NodeKind(node)));
  if (node.Scalar().empty()) Fail(node, fmt::format("{} must not be empty", what));
  return node.Scalar();
}

void RequireMap(const YAML::Node& node, std::string_view what) {
  if (!node.IsMap()) Fail(node, fmt::format("{} must be a mapping, got {}", what, NodeKind(node)));
}

void RequireList(const YAML::Node& node, std::string_view what, size_t exact_size) {
  if (!node.IsSequence())
    Fail(node, fmt::format("{} must be a list, got {}", what, NodeKind(node)));
  if (exact_size != 0 && node.size() != exact_size)
    Fail(node,
         fmt::format("{} must have exactly {} entries, got {}", what, exact_size, node.size()));
}

// Iterates a mapping, rejecting keys outside `allowed` and duplicate keys (yaml-cpp keeps both).
template <typename Fn>
void ForEachKey(const YAML::Node& map, std::string_view where,
                const std::vector<std::string_view>& allowed, Fn fn) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) Fail(key, fmt::format("{}: keys must be strings", where));
    const std::string& name = key.Scalar();
    bool known = false;
    for (auto a : allowed) known |= a == name;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      Fail(key, fmt::format("{}: unknown key \"{}\" (expected one of: {})", where, name, list));
    }
    if (!seen.insert(name).second) Fail(key, fmt::format("{}: duplicate key \"{}\"", where, name));
    fn(name, entry.second);
  }
}

uint8_t ParsePriorityList(const YAML::Node& node, std::string_view what) {
  RequireList(node, what, 0);
  uint8_t mask = 0;
  for (const auto& item : node) {
    auto prio = ParseInt(item, 0, 7, fmt::format("{}: priority", what));
    if (mask & (1u << prio)) Fail(item, fmt::format("{}: priority {} listed twice", what, prio));
    mask = static_cast<uint8_t>(mask | (1u << prio));
  }
  return mask;
}

template <typename T, size_t N>
std::array<T, N> ParseFixedList(const YAML::Node& node, std::string_view what, int64_t lo,
                                int64_t hi, std::string_view item_what) {
  RequireList(node, what, N);
  std::array<T, N> out{};
  for (size_t i = 0; i < N; ++i)
    out[i] =
        static_cast<T>(ParseInt(node[i], lo, hi, fmt::format("{}[{}]: {}", what, i, item_what)));
  return out;
}

// The words of kTsaNames (collectors/dcb.h), the ones `dcb ets show` prints.
uint8_t ParseTsa(const YAML::Node& node, std::string_view what) {
  if (node.IsScalar() && node.Tag() == "?") {
    if (std::optional<Tsa> tsa = ValueOf(kTsaNames, node.Scalar())) {
      return static_cast<uint8_t>(*tsa);
    }
  }
  std::string words;
  for (const auto& entry : kTsaNames)
    words += fmt::format("{}{}", words.empty() ? "" : ", ", entry.name);
  Fail(node, fmt::format("{} must be one of {}", what, words));
}

EtsPolicy ParseEts(const YAML::Node& node) {
  RequireMap(node, "ets");
  EtsPolicy ets;
  bool have_tsa = false, have_bw = false;
  ForEachKey(node, "ets", {"tsa", "bandwidth"}, [&](const std::string& key, const YAML::Node& v) {
    if (key == "tsa") {
      RequireList(v, "ets.tsa", kNumTcs);
      for (int tc = 0; tc < kNumTcs; ++tc)
        ets.tsa[tc] = ParseTsa(v[tc], fmt::format("ets.tsa[{}]", tc));
      have_tsa = true;
    } else {
      ets.bandwidth = ParseFixedList<uint8_t, kNumTcs>(v, "ets.bandwidth", 0, 100, "percent");
      have_bw = true;
    }
  });
  if (!have_tsa || !have_bw) Fail(node, "ets needs both tsa and bandwidth (8 entries each)");
  int sum = 0;
  bool any_ets = false;
  for (int tc = 0; tc < kNumTcs; ++tc) {
    if (ets.tsa[tc] == IEEE_8021QAZ_TSA_ETS) {
      sum += ets.bandwidth[tc];
      any_ets = true;
    } else if (ets.bandwidth[tc] != 0) {
      // The kernel rejects this too (IEEE 802.1Qaz: bandwidth applies only to ETS TCs).
      Fail(node, fmt::format("ets.bandwidth[{}] is {} but TC {} is not an ETS TC (must be 0)", tc,
                             ets.bandwidth[tc], tc));
    }
  }
  if (any_ets && sum != 100)
    Fail(node, fmt::format("ets.bandwidth of the ETS TCs sums to {}, must be 100", sum));
  return ets;
}

BufferPolicy ParseBuffer(const YAML::Node& node) {
  RequireMap(node, "buffer");
  BufferPolicy buffer;
  bool have_map = false;
  ForEachKey(
      node, "buffer", {"prio_buffer", "size"}, [&](const std::string& key, const YAML::Node& v) {
        if (key == "prio_buffer") {
          buffer.prio_buffer =
              ParseFixedList<uint8_t, kNumPriorities>(v, "buffer.prio_buffer", 0, 7, "buffer");
          have_map = true;
        } else if (!IsUnchecked(v)) {
          buffer.size = ParseFixedList<uint32_t, 8>(v, "buffer.size", 0, UINT32_MAX, "bytes");
        }
      });
  if (!have_map) Fail(node, "buffer needs prio_buffer (8 entries)");
  return buffer;
}

std::map<uint8_t, uint8_t> ParseDscpMap(const YAML::Node& node) {
  RequireMap(node, "dscp_prio");
  std::map<uint8_t, uint8_t> out;
  for (const auto& entry : node) {
    auto dscp = ParseInt(entry.first, 0, kNumDscp - 1, "dscp_prio: DSCP");
    auto prio = ParseInt(entry.second, 0, 7, fmt::format("dscp_prio[{}]: priority", dscp));
    if (!out.emplace(static_cast<uint8_t>(dscp), static_cast<uint8_t>(prio)).second)
      Fail(entry.first, fmt::format("dscp_prio: DSCP {} listed twice", dscp));
  }
  return out;
}

// A scalar field: null unchecks it, anything else must be an integer in [lo, hi].
template <typename T>
void ApplyInt(const YAML::Node& v, int64_t lo, int64_t hi, std::string_view key,
              std::optional<T>* field) {
  if (IsUnchecked(v))
    field->reset();
  else
    *field = static_cast<T>(ParseInt(v, lo, hi, key));
}

constexpr DcqcnParamInfo kDcqcnParams[] = {
    {DcqcnRole::kReactionPoint, "clamp_tgt_rate", "boolean"},
    {DcqcnRole::kReactionPoint, "clamp_tgt_rate_after_time_inc", "boolean"},
    {DcqcnRole::kReactionPoint, "rpg_time_reset", "microseconds"},
    {DcqcnRole::kReactionPoint, "rpg_byte_reset", "bytes"},
    {DcqcnRole::kReactionPoint, "rpg_threshold", "count (timer/byte-counter expirations)"},
    {DcqcnRole::kReactionPoint, "rpg_max_rate", "Mbit/s (0 = line rate)"},
    {DcqcnRole::kReactionPoint, "rpg_ai_rate", "Mbit/s"},
    {DcqcnRole::kReactionPoint, "rpg_hai_rate", "Mbit/s"},
    {DcqcnRole::kReactionPoint, "rpg_gd", "exponent (alpha gain 1/2^gd)"},
    {DcqcnRole::kReactionPoint, "rpg_min_dec_fac", "percent"},
    {DcqcnRole::kReactionPoint, "rpg_min_rate", "Mbit/s"},
    {DcqcnRole::kReactionPoint, "rate2set_fcnp", "Mbit/s (0 = line rate)"},
    {DcqcnRole::kReactionPoint, "dce_tcp_g", "1/1024"},
    {DcqcnRole::kReactionPoint, "dce_tcp_rtt", "microseconds"},
    {DcqcnRole::kReactionPoint, "rreduce_mperiod", "microseconds"},
    {DcqcnRole::kReactionPoint, "initial_alpha_value", "1/1024"},
    {DcqcnRole::kNotificationPoint, "min_time_between_cnps", "microseconds"},
};

// dcqcn_params: {roce_rp: {name: value, ...}, roce_np: {...}}; null at any level unchecks what
// it covers, keys given merge into the inherited maps.
void ParseDcqcnParams(const YAML::Node& node, QosPolicy* into) {
  if (IsUnchecked(node)) {
    into->dcqcn_rp_params.clear();
    into->dcqcn_np_params.clear();
    return;
  }
  RequireMap(node, "dcqcn_params");
  const std::vector<std::string_view> roles = {DcqcnRoleName(DcqcnRole::kReactionPoint),
                                               DcqcnRoleName(DcqcnRole::kNotificationPoint)};
  ForEachKey(
      node, "dcqcn_params", roles, [&](const std::string& role_name, const YAML::Node& params) {
        const DcqcnRole role = *ValueOf(kDcqcnRoleNames, role_name);  // ForEachKey checked
        auto& map =
            role == DcqcnRole::kReactionPoint ? into->dcqcn_rp_params : into->dcqcn_np_params;
        if (IsUnchecked(params)) {
          map.clear();
          return;
        }
        const std::string where = "dcqcn_params." + role_name;
        RequireMap(params, where);
        std::vector<std::string_view> names;
        for (const auto& p : kDcqcnParams)
          if (p.role == role) names.push_back(p.name);
        ForEachKey(params, where, names, [&](const std::string& name, const YAML::Node& v) {
          if (IsUnchecked(v))
            map.erase(name);
          else
            map[name] = static_cast<uint64_t>(
                ParseInt(v, 0, UINT32_MAX, fmt::format("{}.{}", where, name)));
        });
      });
}

// The CNP/DCQCN-parameter keys of one policy mapping; false for any other key.
bool ApplyCnpAndDcqcnParams(const std::string& key, const YAML::Node& v, QosPolicy* into) {
  if (key == "cnp_dscp") {
    ApplyInt(v, 0, kNumDscp - 1, key, &into->cnp_dscp);
    return true;
  }
  if (key == "cnp_802p_prio") {
    ApplyInt(v, 0, kNumPriorities - 1, key, &into->cnp_802p_prio);
    return true;
  }
  if (key == "dcqcn_params") {
    ParseDcqcnParams(v, into);
    return true;
  }
  return false;
}

// A host-wide field (net.ipv4.tcp_ecn) is one value for the whole host: a rule that set it per
// device would make two devices with different rules fight over it (each write the other's
// drift). Only `defaults` may set it; a rule may only uncheck it (null) for its devices.
void RejectHostWideKeysInRule(const YAML::Node& node, std::string_view where) {
  if (!node.IsMap()) return;  // ApplyPolicyFields reports it
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || IsUnchecked(entry.second)) continue;
    const std::optional<QosField> field = QosFieldByName(entry.first.Scalar());
    if (field && FieldSpec(*field).host_wide)
      Fail(entry.first, fmt::format("{}: {} is host-wide (one value for the whole host): set it "
                                    "under defaults; a device rule may only uncheck it (null)",
                                    where, FieldSpec(*field).name));
  }
}

// Applies the keys present in `node` on top of `into`; keys absent keep their inherited value.
void ApplyPolicyFields(const YAML::Node& node, std::string_view where, QosPolicy* into) {
  RequireMap(node, where);
  ForEachKey(node, where, PolicyKeys(), [&](const std::string& key, const YAML::Node& v) {
    bool off = IsUnchecked(v);
    if (ApplyCnpAndDcqcnParams(key, v, into)) return;
    if (key == "trust") {
      if (off) {
        into->trust.reset();
      } else if (v.IsScalar() && v.Tag() == "?" && v.Scalar() == "dscp") {
        into->trust = TrustMode::kDscp;
      } else if (v.IsScalar() && v.Tag() == "?" && v.Scalar() == "pcp") {
        into->trust = TrustMode::kPcp;
      } else {
        Fail(v, "trust must be dscp, pcp or null");
      }
    } else if (key == "pfc") {
      into->pfc = off ? std::nullopt : std::optional<uint8_t>(ParsePriorityList(v, "pfc"));
    } else if (key == "dscp_prio") {
      into->dscp_prio = off ? std::nullopt : std::optional(ParseDscpMap(v));
    } else if (key == "prio_tc") {
      if (off)
        into->prio_tc.reset();
      else
        into->prio_tc = ParseFixedList<uint8_t, kNumPriorities>(v, "prio_tc", 0, 7, "TC");
    } else if (key == "ets") {
      into->ets = off ? std::nullopt : std::optional(ParseEts(v));
    } else if (key == "buffer") {
      into->buffer = off ? std::nullopt : std::optional(ParseBuffer(v));
    } else if (key == "roce_tos") {
      ApplyInt(v, 0, 255, key, &into->roce_tos);
    } else if (key == "dcqcn") {
      if (off) {
        into->dcqcn_np.reset();
        into->dcqcn_rp.reset();
        return;
      }
      RequireMap(v, "dcqcn");
      ForEachKey(v, "dcqcn", {"np", "rp"}, [&](const std::string& role, const YAML::Node& p) {
        std::optional<uint8_t>& field = role == "np" ? into->dcqcn_np : into->dcqcn_rp;
        field = IsUnchecked(p) ? std::nullopt
                               : std::optional<uint8_t>(ParsePriorityList(p, "dcqcn." + role));
      });
    } else if (key == "tcp_ecn") {
      ApplyInt(v, 0, 2, key, &into->tcp_ecn);
    } else if (key == "mtu") {
      ApplyInt(v, 68, 65535, key, &into->mtu);
    } else if (key == "link_speed_min_mbps") {
      ApplyInt(v, 1, kMaxLinkSpeedMbps, key, &into->link_speed_min_mbps);
    } else if (key == "sriov_numvfs") {
      ApplyInt(v, 0, kMaxSriovVfs, key, &into->sriov_numvfs);
    }
  });
}

// Cross-field rules, checked on each effective (merged) policy.
void ValidateCombination(const QosPolicy& policy, const YAML::Node& node, std::string_view where) {
  if (policy.trust == TrustMode::kPcp && policy.dscp_prio && !policy.dscp_prio->empty())
    Fail(node, fmt::format("{}: dscp_prio needs trust dscp (with trust pcp the NIC ignores DSCP; "
                           "set dscp_prio: null)",
                           where));
}

PolicyMatch ParseSelector(const YAML::Node& node, std::string_view where) {
  RequireMap(node, where);
  PolicyMatch sel;
  ForEachKey(
      node, where, {"netdev", "pci", "rdma_device"},
      [&](const std::string& key, const YAML::Node& v) {
        std::string value = ParseString(v, fmt::format("{}.{}", where, key));
        if (key == "netdev") {
          try {
            sel.netdev_compiled = std::make_shared<const std::regex>(
                value, std::regex::ECMAScript | std::regex::optimize);
          } catch (const std::regex_error& e) {
            Fail(v, fmt::format("{}.netdev: invalid regex \"{}\": {}", where, value,
                                RegexErrorText(e.code())));
          }
          sel.netdev_regex = value;
        } else if (key == "pci") {
          static const std::regex kPci("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");
          if (!std::regex_match(value, kPci))
            Fail(v, fmt::format("{}.pci: \"{}\" is not a PCI address like 0000:3b:00.0", where,
                                value));
          sel.pci = value;
        } else {
          sel.rdma_device = value;
        }
      });
  if (!sel.netdev_regex && !sel.pci && !sel.rdma_device)
    Fail(node, fmt::format("{} needs at least one of netdev, pci, rdma_device", where));
  return sel;
}

RocePorts ParseRocePorts(const YAML::Node& node) {
  const std::string value = ParseString(node, "roce_ports");
  if (value == RocePortsName(RocePorts::kAuto)) return RocePorts::kAuto;
  if (value == RocePortsName(RocePorts::kAll)) return RocePorts::kAll;
  Fail(node, fmt::format("roce_ports: \"{}\" is not one of auto, all", value));
}

PolicySet ParseDocument(const YAML::Node& root, std::string_view source) {
  if (root.IsNull() || !root.IsDefined()) Fail(root, "empty policy (no YAML document)");
  RequireMap(root, "policy document");
  PolicySet set = DefaultPolicy();
  set.source = std::string(source);

  std::optional<YAML::Node> defaults, devices;  // Node's operator= aliases; copy-construct
  ForEachKey(root, "policy document", {"version", "roce_ports", "defaults", "devices"},
             [&](const std::string& key, const YAML::Node& v) {
               if (key == "version") {
                 if (ParseInt(v, 1, 1, "version") != 1) Fail(v, "version must be 1");
               } else if (key == "roce_ports") {
                 set.roce_ports = ParseRocePorts(v);
               } else if (key == "defaults") {
                 defaults.emplace(v);
               } else {
                 devices.emplace(v);
               }
             });
  // `defaults` first whatever the key order: rules inherit from it.
  if (defaults) {
    ApplyPolicyFields(*defaults, "defaults", &set.defaults);
    ValidateCombination(set.defaults, *defaults, "defaults");
  }
  if (devices && !devices->IsNull()) {
    RequireList(*devices, "devices", 0);
    std::set<std::string> names;
    for (size_t i = 0; i < devices->size(); ++i) {
      const YAML::Node item = (*devices)[i];
      std::string where = fmt::format("devices[{}]", i);
      RequireMap(item, where);
      PolicyRule rule;
      rule.name = where;
      rule.policy = set.defaults;
      rule.line = item.Mark().line + 1;
      bool have_match = false;
      ForEachKey(item, where, {"name", "match", "policy"},
                 [&](const std::string& key, const YAML::Node& v) {
                   if (key == "name") {
                     rule.name = ParseString(v, where + ".name");
                   } else if (key == "match") {
                     rule.match = ParseSelector(v, where + ".match");
                     have_match = true;
                   } else if (!v.IsNull()) {
                     RejectHostWideKeysInRule(v, where + ".policy");
                     ApplyPolicyFields(v, where + ".policy", &rule.policy);
                     ValidateCombination(rule.policy, v, where + ".policy");
                   }
                 });
      if (!have_match) Fail(item, fmt::format("{} needs a match", where));
      if (!names.insert(rule.name).second)
        Fail(item, fmt::format("{}: rule name \"{}\" used twice", where, rule.name));
      set.rules.push_back(std::move(rule));
    }
  }
  return set;
}

// Where each document of a YAML stream starts, and where its root node is: the events yaml-cpp's
// parser reports, without building the documents.
class DocumentMarks : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;  // its first token
    YAML::Mark root;   // its root node
  };
  std::vector<Document> documents;

  void OnDocumentStart(const YAML::Mark& mark) override {
    documents.push_back({mark, mark});
    awaiting_root_ = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (awaiting_root_ && !documents.empty()) documents.back().root = mark;
    awaiting_root_ = false;
  }
  bool awaiting_root_ = false;
};

// The one document of `text`, or nullopt when there is none (empty, or comments only).
// Not YAML::LoadAll: in yaml-cpp 0.7 (Debian 12) it never returns when a token that cannot start
// a node stands outside any collection, e.g. the ',' of ",[8]}" (the fuzz finding in
// tests/fixtures/fuzz/). The scanner emits FLOW_ENTRY even at flow level 0,
// SingleDocParser::HandleNode consumes nothing for it and reports a null document, and LoadAll's
// `while (parser.HandleNextDocument(builder))` is handed the same token again, forever, one more
// null node each turn (jbeder/yaml-cpp#1040; fixed upstream by #1318 and #1319, after 0.8.0).
// So the documents are walked here with YAML::Parser, at most three, which bounds the work: a
// document that starts where the previous one started consumed no token, i.e. the parser is stuck
// on it, and it is reported as malformed YAML at that token. Three suffice: the stuck document is
// always the last one, so it shows at the latest as the second and third. The document itself is
// then built by YAML::Load, which asks for one document only and so cannot loop either.
std::optional<YAML::Node> LoadSingleDocument(const std::string& text) {
  DocumentMarks marks;
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    const auto& docs = marks.documents;
    while (docs.size() < 3 && parser.HandleNextDocument(marks)) {
      if (docs.size() >= 2 && docs.back().start.pos == docs[docs.size() - 2].start.pos) {
        const YAML::Mark& at = docs.back().start;
        const auto pos = static_cast<size_t>(at.pos);
        const unsigned char byte = pos < text.size() ? static_cast<unsigned char>(text[pos]) : 0;
        throw PolicyError{
            at, std::isprint(byte) != 0
                    ? fmt::format("malformed YAML: unexpected '{}'", static_cast<char>(byte))
                    : fmt::format("malformed YAML: unexpected byte {:#04x}", byte)};
      }
    }
  }
  if (marks.documents.empty()) return std::nullopt;
  if (marks.documents.size() > 1)
    throw PolicyError{marks.documents[1].root, "more than one YAML document"};
  return YAML::Load(text);
}

}  // namespace

PolicySet DefaultPolicy() {
  PolicySet set;
  set.source = "embedded default";
  QosPolicy& p = set.defaults;
  p.trust = TrustMode::kDscp;
  p.pfc = 1u << 3;
  p.dscp_prio = std::map<uint8_t, uint8_t>{{24, 3}, {26, 3}, {48, 6}};
  p.roce_tos = 106;  // DSCP 26 << 2 | ECT(0)
  p.dcqcn_np = 1u << 3;
  p.dcqcn_rp = 1u << 3;
  p.tcp_ecn = 1;
  // CNPs on the DSCP and priority the dscp_prio entry 48 -> 6 keeps fast (MOFED's defaults).
  p.cnp_dscp = 48;
  p.cnp_802p_prio = 6;
  return set;
}

Result<PolicySet> ParsePolicy(std::string_view yaml_text, std::string_view source) {
  try {
    std::optional<YAML::Node> doc = LoadSingleDocument(std::string(yaml_text));
    if (!doc)
      return MakeError(EINVAL, fmt::format("{}:1:1: empty policy (no YAML document)", source));
    return ParseDocument(*doc, source);
  } catch (const PolicyError& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    int column = e.mark.is_null() ? 1 : e.mark.column + 1;
    return MakeError(EINVAL, fmt::format("{}:{}:{}: {}", source, line, column, e.what));
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    int column = e.mark.is_null() ? 1 : e.mark.column + 1;
    return MakeError(EINVAL,
                     fmt::format("{}:{}:{}: malformed YAML: {}", source, line, column, e.msg));
  } catch (const std::exception& e) {
    return MakeError(EINVAL, fmt::format("{}: {}", source, e.what()));
  }
}

Result<PolicySet> LoadPolicyFile(const std::string& path) {
  Result<std::string> text = ReadRegularFile(path, kMaxPolicyFileBytes);
  if (!text) return text.error();
  return ParsePolicy(*text, path);
}

std::span<const DcqcnParamInfo> KnownDcqcnParams() { return kDcqcnParams; }

}  // namespace roceqos
