// QoS costs: parsing one full DCB_CMD_IEEE_GET reply (mlx5 in DSCP trust: ETS, maxrate, PFC,
// buffer, 64 APP entries, DCBX), evaluating drift and the state fingerprint of one device, the
// QoS stage of a sample when nothing changed (the common case: every device reuses its state),
// and rendering the QoS families of 8 devices at scrape time. One live IEEE_GET round trip on
// the host's loopback (EOPNOTSUPP: the kernel path without a driver) bounds the netlink part.

#include <benchmark/benchmark.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <memory>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/netlink/socket.h"
#include "exporter/core/qos_state.h"
#include "exporter/qos/drift.h"
#include "exporter/qos/qos_engine.h"
#include "exporter/render/metrics.h"
#include "tests/unit/support/qos_observation.h"

namespace roceqos {
namespace {

// A reply as mlx5 in DSCP trust sends it (capture 07 plus buffers and maxrate).
std::vector<std::byte> FullReply() {
  netlink::Message msg(RTM_GETDCB, 0);
  dcbmsg header{AF_UNSPEC, DCB_CMD_IEEE_GET, 0};
  msg.PutHeader(&header, sizeof header);
  msg.PutString(DCB_ATTR_IFNAME, "ens1f0np0");
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  ieee_ets ets{};
  for (int i = 0; i < 8; ++i) {
    ets.tc_tsa[i] = IEEE_8021QAZ_TSA_VENDOR;
    ets.tc_tx_bw[i] = 100;
    ets.prio_tc[i] = static_cast<uint8_t>(i);
  }
  msg.Put(DCB_ATTR_IEEE_ETS, &ets, sizeof ets);
  ieee_maxrate rate{};
  msg.Put(DCB_ATTR_IEEE_MAXRATE, &rate, sizeof rate);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;
  pfc.delay = 7;
  msg.Put(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
  dcbnl_buffer buf{};
  buf.buffer_size[0] = 130944;
  buf.buffer_size[1] = 130944;
  buf.prio2buffer[3] = 1;
  buf.total_size = 262016;
  msg.Put(DCB_ATTR_DCB_BUFFER, &buf, sizeof buf);
  size_t table = msg.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
  for (uint16_t d = 0; d < 64; ++d) {
    dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(d / 8), d};
    msg.Put(DCB_ATTR_IEEE_APP, &app, sizeof app);
  }
  msg.EndNest(table);
  msg.EndNest(ieee);
  msg.PutU8(DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_VER_CEE);
  auto bytes = msg.bytes();
  const size_t skip = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
  return {bytes.begin() + static_cast<long>(skip), bytes.end()};
}

// The parsed reply with the host sources of a NIC that follows the default policy.
ObservedQos Observation() {
  const auto reply = FullReply();
  ObservedQos o = qos_test::DefaultPolicyObservation();
  o.dcb = Observed<QosState>::Ok(*ParseIeeeGetPayload(reply, "ens1f0np0"));
  return o;
}

void BM_ParseIeeeGetReply(benchmark::State& state) {
  const auto reply = FullReply();
  for (auto _ : state) {
    auto parsed = ParseIeeeGetPayload(reply, "ens1f0np0");
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * reply.size()));
}
BENCHMARK(BM_ParseIeeeGetReply);

void BM_EvaluateDriftAndFingerprint(benchmark::State& state) {
  const QosPolicy policy = DefaultPolicy().defaults;
  const ObservedQos observed = Observation();
  for (auto _ : state) {
    DeviceDrift drift = EvaluateDrift(policy, observed);
    std::string hash = StateFingerprint(observed);
    benchmark::DoNotOptimize(drift);
    benchmark::DoNotOptimize(hash);
  }
}
BENCHMARK(BM_EvaluateDriftAndFingerprint);

// A reader that must not be called: the stage of an unchanged sample reuses every state.
class NoReads : public QosReader {
 public:
  Observed<QosState> ReadDcb(const std::string&) override { return Observed<QosState>::Absent(); }
  DcqcnState ReadDcqcn(const std::string&) override { return {}; }
  RoceTosState ReadRoceTos(const std::string&, uint32_t) override { return {}; }
  Observed<int> ReadTcpEcn() override { return Observed<int>::Absent(); }
  Observed<uint16_t> ReadStormTimeout(const std::string&) override {
    return Observed<uint16_t>::Absent();
  }
};

void BM_QosUpdateNothingChanged(benchmark::State& state) {
  QosEngineOptions options;
  options.poll_interval = std::chrono::hours(1);
  QosEngine engine(options, std::make_shared<const PolicySet>(DefaultPolicy()),
                   std::make_unique<NoReads>());
  std::vector<QosEngine::DeviceInput> inputs;
  for (int i = 0; i < state.range(0); ++i) {
    auto device = std::make_shared<Device>();
    device->name = "ens" + std::to_string(i) + "f0np0";
    inputs.push_back({device, nullptr, StormGuard::kClear});
  }
  auto first = engine.Update(inputs);  // reads everything once
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].previous = first.devices[i];
  for (auto _ : state) {
    auto out = engine.Update(inputs);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_QosUpdateNothingChanged)->Arg(8)->Arg(32);

void BM_RenderQosFamilies(benchmark::State& state) {
  Snapshot snapshot;
  const QosPolicy policy = DefaultPolicy().defaults;
  for (int i = 0; i < state.range(0); ++i) {
    DeviceSnapshot d;
    auto device = std::make_shared<Device>();
    device->name = "ens" + std::to_string(i) + "f0np0";
    d.device = device;
    auto q = std::make_shared<QosDeviceState>();
    q->observed = Observation();
    q->drift = EvaluateDrift(policy, q->observed);
    q->policy_rule = "default";
    q->policy_hash = PolicyFingerprint(policy);
    q->state_hash = StateFingerprint(q->observed);
    d.qos = q;
    snapshot.devices.push_back(std::move(d));
  }
  snapshot.qos = std::make_shared<QosGlobalState>();
  size_t series = 0;
  for (auto _ : state) {
    Families out;
    MetricSink sink(out);
    RenderQos(snapshot, sink);
    series = 0;
    for (const auto& f : out) series += f.metric.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["series"] = static_cast<double>(series);
}
BENCHMARK(BM_RenderQosFamilies)->Arg(8);

// One RTM_GETDCB IEEE_GET round trip to the kernel (loopback: no dcbnl_ops, EOPNOTSUPP after the
// device lookup): the syscall and RTNL part of a read, without a driver's firmware queries.
void BM_DcbReadRoundTripLoopback(benchmark::State& state) {
  auto socket = netlink::Socket::Open(NETLINK_ROUTE);
  if (!socket) {
    state.SkipWithError(socket.error().message.c_str());
    return;
  }
  DcbReader client(&*socket);
  for (auto _ : state) {
    auto r = client.Read("lo");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_DcbReadRoundTripLoopback);

}  // namespace
}  // namespace roceqos
