#include "collectors/rdma_resources.h"

#include <fmt/format.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/rdma.h"

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::Bytes;
using netlink::MakePolicy;
namespace attr = netlink::attr;

// restrack's kern_name is the creating module's KBUILD_MODNAME (ib_create_qp_kernel() and the
// rdma_restrack_set_name() callers); MODULE_NAME_LEN is 64 - sizeof(unsigned long).
constexpr uint16_t kKernNameMax = 64;
// The summary names are restrack's type names (rdma_restrack_type_str in
// drivers/infiniband/core/restrack.c: "pd", "cq", "qp", "cm_id", "mr", "ctx", "srq").
constexpr uint16_t kSummaryNameMax = 32;
// enum ib_qp_state (include/rdma/ib_verbs.h, kernel-internal): IB_QPS_ERR. iproute2's
// rdma/res-qp.c spells the same values (RESET, INIT, RTR, RTS, SQD, SQE, ERR).
constexpr uint8_t kIbQpsErr = 6;

// res_get_common_dumpit (drivers/infiniband/core/nldev.c): fill_nldev_handle, then the table
// RDMA_NLDEV_ATTR_RES_QP with one RDMA_NLDEV_ATTR_RES_QP_ENTRY per QP that fits the message.
constexpr auto kQpReplyPolicy = MakePolicy<RDMA_NLDEV_ATTR_RES_QP + 1>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_DEV_INDEX"))},
    {RDMA_NLDEV_ATTR_DEV_NAME, attr::NonEmptyString("RDMA_NLDEV_ATTR_DEV_NAME", kIbDeviceNameMax)},
    {RDMA_NLDEV_ATTR_RES_QP, attr::Required(attr::Nested("RDMA_NLDEV_ATTR_RES_QP"))},
});

// fill_res_qp_entry: PORT_INDEX only once the QP is bound to a port (qp->port != 0), LQPN
// always, TYPE and STATE from ib_query_qp, then fill_res_name_pid: KERN_NAME for a kernel QP,
// PID (task_pid_vnr: in the caller's PID namespace) for a user QP whose task is alive. The
// entry also carries RQPN, RQ_PSN, SQ_PSN, PATH_MIG_STATE, PDN and the RDMA_NLDEV_ATTR_DRIVER
// nest, which attribution does not need: ignored.
constexpr auto kQpEntryPolicy = MakePolicy<RDMA_NLDEV_ATTR_RES_KERN_NAME + 1>({
    {RDMA_NLDEV_ATTR_PORT_INDEX, attr::U32("RDMA_NLDEV_ATTR_PORT_INDEX")},
    {RDMA_NLDEV_ATTR_RES_LQPN, attr::Required(attr::U32("RDMA_NLDEV_ATTR_RES_LQPN"))},
    {RDMA_NLDEV_ATTR_RES_TYPE, attr::U8("RDMA_NLDEV_ATTR_RES_TYPE")},
    {RDMA_NLDEV_ATTR_RES_STATE, attr::U8("RDMA_NLDEV_ATTR_RES_STATE")},
    {RDMA_NLDEV_ATTR_RES_PID, attr::U32("RDMA_NLDEV_ATTR_RES_PID")},
    {RDMA_NLDEV_ATTR_RES_KERN_NAME,
     attr::NonEmptyString("RDMA_NLDEV_ATTR_RES_KERN_NAME", kKernNameMax)},
});

// fill_res_info: fill_nldev_handle, then RDMA_NLDEV_ATTR_RES_SUMMARY with one
// RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY per restrack type.
constexpr auto kSummaryPolicy = MakePolicy<RDMA_NLDEV_ATTR_RES_SUMMARY + 1>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_DEV_INDEX"))},
    {RDMA_NLDEV_ATTR_DEV_NAME,
     attr::Required(attr::NonEmptyString("RDMA_NLDEV_ATTR_DEV_NAME", kIbDeviceNameMax))},
    {RDMA_NLDEV_ATTR_RES_SUMMARY, attr::Required(attr::Nested("RDMA_NLDEV_ATTR_RES_SUMMARY"))},
});

// fill_res_info_entry: the name, then CURR put with nla_put_u64_64bit (a zero-length
// RDMA_NLDEV_ATTR_PAD, type 0, may precede it: ignored like any unlisted type).
constexpr auto kSummaryEntryPolicy = MakePolicy<RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR + 1>({
    {RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME,
     attr::Required(
         attr::NonEmptyString("RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME", kSummaryNameMax))},
    {RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR,
     attr::Required(attr::U64("RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR"))},
});

// Module names are C identifiers in practice (KBUILD_MODNAME turns '-' into '_'); anything else
// would end up in a label value, so it is refused.
bool ValidKernName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

struct ParsedQp {
  RdmaQpOwnerKey key;
  bool in_error = false;
};

Result<ParsedQp> ParseQpEntry(Bytes entry_bytes, uint32_t device_index, size_t index) {
  Result<Attrs> entry = Attrs::Parse(entry_bytes, kQpEntryPolicy, "RDMA_NLDEV_ATTR_RES_QP_ENTRY");
  if (!entry) {
    Error error = entry.error();
    error.message = fmt::format("{} (entry #{})", error.message, index);
    return error;
  }
  ParsedQp qp;
  qp.key.device_index = device_index;
  qp.key.port = entry->U32(RDMA_NLDEV_ATTR_PORT_INDEX).value_or(0);
  std::optional<std::string_view> kern_name = entry->String(RDMA_NLDEV_ATTR_RES_KERN_NAME);
  if (kern_name) {
    if (!ValidKernName(*kern_name)) {
      return MakeError(0, fmt::format("RDMA_NLDEV_ATTR_RES_QP_ENTRY (entry #{}): "
                                      "RDMA_NLDEV_ATTR_RES_KERN_NAME has characters outside "
                                      "[A-Za-z0-9_-]",
                                      index));
    }
    qp.key.kern_name = std::string(*kern_name);
  } else {
    qp.key.pid = entry->U32(RDMA_NLDEV_ATTR_RES_PID).value_or(0);
  }
  qp.in_error = entry->U8(RDMA_NLDEV_ATTR_RES_STATE) == kIbQpsErr;
  return qp;
}

}  // namespace

netlink::Message RdmaQpDumpRequest(uint32_t device_index) {
  netlink::Message request(RdmaNldevType(RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_DUMP);
  request.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, device_index);
  return request;
}

netlink::Message RdmaResourceSummaryDumpRequest() {
  return netlink::Message(RdmaNldevType(RDMA_NLDEV_CMD_RES_GET), NLM_F_DUMP);
}

Result<void> RdmaQpTally::AddQpReply(Bytes payload) {
  constexpr std::string_view kContext = "RDMA_NLDEV_CMD_RES_QP_GET reply";
  Result<Attrs> top = Attrs::Parse(payload, kQpReplyPolicy, kContext);
  if (!top) return top.error();
  const uint32_t device_index = *top->U32(RDMA_NLDEV_ATTR_DEV_INDEX);

  // Validate the whole message before counting any of it; the list lives for this call only.
  std::vector<ParsedQp> parsed;
  Result<void> walked = netlink::ForEachAttr(
      top->Raw(RDMA_NLDEV_ATTR_RES_QP), "RDMA_NLDEV_ATTR_RES_QP",
      [&](uint16_t type, Bytes entry_bytes) -> Result<void> {
        if (type != RDMA_NLDEV_ATTR_RES_QP_ENTRY) return {};
        Result<ParsedQp> qp = ParseQpEntry(entry_bytes, device_index, parsed.size());
        if (!qp) return qp.error();
        parsed.push_back(std::move(*qp));
        return {};
      });
  if (!walked) {
    Error error = walked.error();
    error.message = fmt::format("{}: {}", kContext, error.message);
    return error;
  }
  for (ParsedQp& qp : parsed) {
    ++total_qps_;
    auto it = owners_.find(qp.key);
    if (it == owners_.end()) {
      if (owners_.size() >= kMaxOwners) {
        ++overflow_qps_;
        continue;
      }
      it = owners_.emplace(std::move(qp.key), RdmaQpCount{}).first;
    }
    ++it->second.qps;
    if (qp.in_error) ++it->second.qps_in_error;
  }
  return {};
}

void RdmaQpTally::Clear() {
  owners_.clear();
  total_qps_ = 0;
  overflow_qps_ = 0;
}

Result<RdmaResourceSummary> ParseRdmaResourceSummary(Bytes payload) {
  constexpr std::string_view kContext = "RDMA_NLDEV_CMD_RES_GET reply";
  Result<Attrs> top = Attrs::Parse(payload, kSummaryPolicy, kContext);
  if (!top) return top.error();
  RdmaResourceSummary summary;
  summary.device_index = *top->U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  summary.device = std::string(*top->String(RDMA_NLDEV_ATTR_DEV_NAME));
  Result<void> walked = netlink::ForEachAttr(
      top->Raw(RDMA_NLDEV_ATTR_RES_SUMMARY), "RDMA_NLDEV_ATTR_RES_SUMMARY",
      [&](uint16_t type, Bytes entry_bytes) -> Result<void> {
        if (type != RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY) return {};
        Result<Attrs> entry =
            Attrs::Parse(entry_bytes, kSummaryEntryPolicy, "RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY");
        if (!entry) return entry.error();
        if (summary.entries.size() >= kMaxSummaryEntries) return {};
        summary.entries.emplace_back(*entry->String(RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME),
                                     *entry->U64(RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR));
        return {};
      });
  if (!walked) {
    Error error = walked.error();
    error.message = fmt::format("{}: {}", kContext, error.message);
    return error;
  }
  return summary;
}

}  // namespace roceqos
