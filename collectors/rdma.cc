#include "collectors/rdma.h"

#include <fmt/format.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace roceqos {
namespace {

using netlink::Attrs;
using netlink::Bytes;
using netlink::MakePolicy;
namespace attr = netlink::attr;

constexpr uint16_t kIfNameSize = 16;  // IFNAMSIZ

// fill_nldev_handle + fill_port_info (drivers/infiniband/core/nldev.c).
constexpr auto kPortPolicy = MakePolicy<RDMA_NLDEV_ATTR_NDEV_NAME + 1>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_DEV_INDEX"))},
    {RDMA_NLDEV_ATTR_DEV_NAME,
     attr::Required(attr::NonEmptyString("RDMA_NLDEV_ATTR_DEV_NAME", kIbDeviceNameMax))},
    {RDMA_NLDEV_ATTR_PORT_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_PORT_INDEX"))},
    {RDMA_NLDEV_ATTR_PORT_STATE, attr::U8("RDMA_NLDEV_ATTR_PORT_STATE")},
    {RDMA_NLDEV_ATTR_PORT_PHYS_STATE, attr::U8("RDMA_NLDEV_ATTR_PORT_PHYS_STATE")},
    {RDMA_NLDEV_ATTR_NDEV_INDEX, attr::U32("RDMA_NLDEV_ATTR_NDEV_INDEX")},
    {RDMA_NLDEV_ATTR_NDEV_NAME, attr::NonEmptyString("RDMA_NLDEV_ATTR_NDEV_NAME", kIfNameSize)},
});

// fill_dev_info: on RDMA_NLDEV_CMD_GET, PORT_INDEX carries the number of ports.
constexpr auto kDevicePolicy = MakePolicy<RDMA_NLDEV_ATTR_DEV_PROTOCOL + 1>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_DEV_INDEX"))},
    {RDMA_NLDEV_ATTR_DEV_NAME,
     attr::Required(attr::NonEmptyString("RDMA_NLDEV_ATTR_DEV_NAME", kIbDeviceNameMax))},
    {RDMA_NLDEV_ATTR_PORT_INDEX, attr::U32("RDMA_NLDEV_ATTR_PORT_INDEX")},
    {RDMA_NLDEV_ATTR_DEV_PROTOCOL, attr::String("RDMA_NLDEV_ATTR_DEV_PROTOCOL")},
});

// stat_get_doit_default_counter: handle, PORT_INDEX, then the STAT_HWCOUNTERS table.
constexpr auto kStatPolicy = MakePolicy<RDMA_NLDEV_ATTR_STAT_HWCOUNTERS + 1>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_DEV_INDEX"))},
    {RDMA_NLDEV_ATTR_DEV_NAME, attr::NonEmptyString("RDMA_NLDEV_ATTR_DEV_NAME", kIbDeviceNameMax)},
    {RDMA_NLDEV_ATTR_PORT_INDEX, attr::Required(attr::U32("RDMA_NLDEV_ATTR_PORT_INDEX"))},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTERS,
     attr::Required(attr::Nested("RDMA_NLDEV_ATTR_STAT_HWCOUNTERS"))},
});

// One STAT_HWCOUNTER_ENTRY (rdma_nl_stat_hwcounter_entry). The value is put with
// nla_put_u64_64bit, so a zero-length RDMA_NLDEV_ATTR_PAD (type 0) may precede it: ignored.
constexpr auto kEntryPolicy = MakePolicy<RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE + 1>({
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
     attr::Required(attr::NonEmptyString("RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME"))},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
     attr::Required(attr::U64("RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE"))},
});

struct StatReply {
  uint32_t device_index = 0;
  uint32_t port = 0;
  CounterSet counters;
};

Result<StatReply> ParseStat(Bytes payload,
                            const std::shared_ptr<const std::vector<std::string>>& previous) {
  constexpr std::string_view kContext = "RDMA_NLDEV_CMD_STAT_GET reply";
  Result<Attrs> top = Attrs::Parse(payload, kStatPolicy, kContext);
  if (!top) return top.error();
  StatReply reply;
  reply.device_index = *top->U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  reply.port = *top->U32(RDMA_NLDEV_ATTR_PORT_INDEX);

  // Compare names with the previous sample while parsing, so an unchanged list costs no string
  // allocation; on the first difference, copy the matching prefix and build a new list.
  const std::vector<std::string>* prev = previous.get();
  std::vector<std::string> fresh;
  bool same = prev != nullptr;
  size_t index = 0;
  std::vector<uint64_t>& values = reply.counters.values;
  values.reserve(prev != nullptr ? prev->size() : 64);

  Result<void> walked = netlink::ForEachAttr(
      top->Raw(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS), "RDMA_NLDEV_ATTR_STAT_HWCOUNTERS",
      [&](uint16_t type, Bytes entry_bytes) -> Result<void> {
        if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) return {};
        // The entry's index joins the context only on failure: formatting it per entry would
        // cost an allocation per counter per sample.
        Result<Attrs> entry =
            Attrs::Parse(entry_bytes, kEntryPolicy, "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY");
        if (!entry) {
          Error error = entry.error();
          error.message = fmt::format("{} (entry #{})", error.message, index);
          return error;
        }
        std::string_view name = *entry->String(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME);
        if (same && (index >= prev->size() || (*prev)[index] != name)) {
          same = false;
          fresh.assign(prev->begin(),
                       prev->begin() + static_cast<ptrdiff_t>(std::min(index, prev->size())));
        }
        if (!same) fresh.emplace_back(name);
        values.push_back(*entry->U64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE));
        ++index;
        return {};
      });
  if (!walked) return walked.error();
  if (same && index == prev->size()) {
    reply.counters.names = previous;
  } else {
    if (same) fresh.assign(prev->begin(), prev->begin() + static_cast<ptrdiff_t>(index));
    reply.counters.names = std::make_shared<const std::vector<std::string>>(std::move(fresh));
  }
  return reply;
}

class NetlinkRdmaCollector final : public RdmaCollector {
 public:
  explicit NetlinkRdmaCollector(netlink::Socket socket) : socket_(std::move(socket)) {}

  Result<std::vector<RdmaPort>> ListPorts() override {
    std::vector<RdmaDevice> devices;
    netlink::Message list(RdmaNldevType(RDMA_NLDEV_CMD_GET), NLM_F_DUMP);
    Result<void> listed = socket_.Request(
        list,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          Result<RdmaDevice> device = ParseRdmaDeviceReply(reply.body);
          if (!device) return device.error();
          devices.push_back(std::move(*device));
          return {};
        },
        "RDMA_NLDEV_CMD_GET dump");
    if (!listed) return listed.error();

    // nldev_port_get_dumpit() answers -EINVAL without RDMA_NLDEV_ATTR_DEV_INDEX: ports can only
    // be dumped one device at a time (iproute2 `rdma link` does the same).
    std::vector<RdmaPort> ports;
    for (const RdmaDevice& device : devices) {
      netlink::Message request(RdmaNldevType(RDMA_NLDEV_CMD_PORT_GET), NLM_F_DUMP);
      request.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, device.index);
      const std::string context = fmt::format("RDMA_NLDEV_CMD_PORT_GET dump {}", device.name);
      Result<void> dumped = socket_.Request(
          request,
          [&](const netlink::NlMessage& reply) -> Result<void> {
            Result<RdmaPort> port = ParseRdmaPortReply(reply.body);
            if (!port) return port.error();
            port->protocol = device.protocol;
            ports.push_back(std::move(*port));
            return {};
          },
          context);
      // A device unregistered between the two dumps is simply gone.
      if (!dumped && dumped.error().errnum != ENODEV) return dumped.error();
    }
    ForgetAbsentPorts(names_, ports);
    return ports;
  }

  Result<CounterSet> ReadCounters(const RdmaPort& port) override {
    auto& names = names_[PortKey(port.device_index, port.port)];
    // No NLM_F_ACK: the reply itself completes the doit, so a sample costs one recvmsg.
    netlink::Message request(RdmaNldevType(RDMA_NLDEV_CMD_STAT_GET), 0);
    request.PutU32(RDMA_NLDEV_ATTR_DEV_INDEX, port.device_index);
    request.PutU32(RDMA_NLDEV_ATTR_PORT_INDEX, port.port);
    const std::string context =
        fmt::format("RDMA_NLDEV_CMD_STAT_GET {}/{}", port.device, port.port);
    Result<StatReply> parsed = MakeError(EPROTO, context + ": no reply");
    Result<void> status = socket_.Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          parsed = ParseStat(reply.body, names);
          if (!parsed) return parsed.error();
          if (parsed->device_index != port.device_index || parsed->port != port.port) {
            return MakeError(EPROTO, fmt::format("{}: reply is for device {} port {}", context,
                                                 parsed->device_index, parsed->port));
          }
          return {};
        },
        context);
    if (!status) return status.error();
    if (!parsed) return parsed.error();
    names = parsed->counters.names;
    return std::move(parsed->counters);
  }

 private:
  netlink::Socket socket_;
  PortNamesCache names_;  // bounded by ForgetAbsentPorts after every listing
};

}  // namespace

uint16_t RdmaNldevType(int op) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op));
}

uint64_t PortKey(uint32_t device_index, uint32_t port) {
  return (uint64_t{device_index} << 32) | port;
}

void ForgetAbsentPorts(PortNamesCache& cache, const std::vector<RdmaPort>& present) {
  std::unordered_set<uint64_t> keep;
  for (const RdmaPort& port : present) keep.insert(PortKey(port.device_index, port.port));
  std::erase_if(cache, [&](const auto& entry) { return !keep.contains(entry.first); });
}

Result<CounterSet> ParseRdmaStatReply(
    Bytes payload, const std::shared_ptr<const std::vector<std::string>>& previous_names) {
  Result<StatReply> reply = ParseStat(payload, previous_names);
  if (!reply) return reply.error();
  return std::move(reply->counters);
}

Result<RdmaPort> ParseRdmaPortReply(Bytes payload) {
  Result<Attrs> attrs = Attrs::Parse(payload, kPortPolicy, "RDMA_NLDEV_CMD_PORT_GET reply");
  if (!attrs) return attrs.error();
  RdmaPort port;
  port.device = std::string(*attrs->String(RDMA_NLDEV_ATTR_DEV_NAME));
  port.device_index = *attrs->U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  port.port = *attrs->U32(RDMA_NLDEV_ATTR_PORT_INDEX);
  port.port_state = attrs->U8(RDMA_NLDEV_ATTR_PORT_STATE).value_or(0);
  port.phys_state = attrs->U8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE).value_or(0);
  // Present only when the netdev lives in the caller's netns (fill_port_info).
  port.netdev = std::string(attrs->String(RDMA_NLDEV_ATTR_NDEV_NAME).value_or(""));
  port.netdev_index = static_cast<int32_t>(attrs->U32(RDMA_NLDEV_ATTR_NDEV_INDEX).value_or(0));
  return port;
}

Result<RdmaDevice> ParseRdmaDeviceReply(Bytes payload) {
  Result<Attrs> attrs = Attrs::Parse(payload, kDevicePolicy, "RDMA_NLDEV_CMD_GET reply");
  if (!attrs) return attrs.error();
  RdmaDevice device;
  device.index = *attrs->U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  device.name = std::string(*attrs->String(RDMA_NLDEV_ATTR_DEV_NAME));
  device.port_count = attrs->U32(RDMA_NLDEV_ATTR_PORT_INDEX).value_or(0);
  device.protocol = std::string(attrs->String(RDMA_NLDEV_ATTR_DEV_PROTOCOL).value_or(""));
  return device;
}

Result<std::unique_ptr<RdmaCollector>> RdmaCollector::Open(const netlink::SocketOptions& options) {
  Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_RDMA, options);
  if (!socket) {
    Error error = socket.error();
    error.message = "RDMA netlink: " + error.message;
    return error;
  }
  return std::unique_ptr<RdmaCollector>(new NetlinkRdmaCollector(std::move(*socket)));
}

}  // namespace roceqos
