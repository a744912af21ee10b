#include "exporter/app/check.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace roceqos {
namespace {

// A host with configurable per-device observations.
class FakeReader : public QosReader {
 public:
  std::map<std::string, Observed<QosState>> dcb;
  std::map<std::string, DcqcnState> dcqcn;
  std::map<std::string, RoceTosState> tos;
  std::map<std::string, LinkFacts> link;
  Observed<int> tcp_ecn = Observed<int>::Ok(1);
  int tcp_ecn_reads = 0;

  Observed<QosState> ReadDcb(const std::string& netdev) override {
    auto it = dcb.find(netdev);
    return it == dcb.end() ? Observed<QosState>::Absent() : it->second;
  }
  DcqcnState ReadDcqcn(const std::string& netdev) override { return dcqcn[netdev]; }
  RoceTosState ReadRoceTos(const std::string& dev, uint32_t port) override {
    return tos[dev + "/" + std::to_string(port)];
  }
  Observed<int> ReadTcpEcn() override {
    ++tcp_ecn_reads;
    return tcp_ecn;
  }
  Observed<uint16_t> ReadStormTimeout(const std::string&) override {
    return Observed<uint16_t>::Ok(8000);
  }
  LinkFacts ReadLinkFacts(const std::string& netdev) override { return link[netdev]; }

  // A NIC configured like capture 07 (trust dscp, PFC 3) with MOFED DCQCN on 3 and ToS 106.
  void AddGoodNic(const std::string& netdev, const std::string& rdma) {
    QosState s;
    s.pfc = PfcState{8, 0x08, 0, 7};
    for (uint16_t d = 0; d < 64; ++d)
      s.apps.push_back(DcbApp{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(d / 8), d});
    dcb[netdev] = Observed<QosState>::Ok(s);
    DcqcnState e;
    for (int p = 0; p < 8; ++p) {
      e.np_enabled[p] = Observed<bool>::Ok(p == 3);
      e.rp_enabled[p] = Observed<bool>::Ok(p == 3);
    }
    dcqcn[netdev] = e;
    tos[rdma + "/1"].mofed_tclass = Observed<std::optional<uint8_t>>::Ok(106);
  }
};

Device Nic(const std::string& name, const std::string& rdma, const std::string& pci) {
  Device d;
  d.name = name;
  d.pci_address = pci;
  d.pci_vendor = 0x15b3;
  d.role = DeviceRole::kPf;
  d.oper_state = OperState::kUp;
  d.mtu = 4200;
  RdmaPort port;
  port.device = rdma;
  port.port = 1;
  port.port_state = 4;  // IB_PORT_ACTIVE
  port.netdev = name;
  d.rdma_ports.push_back(port);
  return d;
}

Inventory TwoNics() {
  Inventory inv;
  inv.devices.push_back(Nic("ens1f1np1", "mlx5_1", "0000:3b:00.1"));
  inv.devices.push_back(Nic("ens1f0np0", "mlx5_0", "0000:3b:00.0"));
  Device veth;
  veth.name = "veth0";
  veth.kind = "veth";
  inv.devices.push_back(veth);
  return inv;
}

struct CheckRun {
  int code;
  std::string out, err;
};

CheckRun Check(FakeReader& reader, CheckOptions options = {}, Result<Inventory> inv = TwoNics()) {
  std::ostringstream out, err;
  int code = RunCheckWith(options, inv, reader, out, err);
  return {code, out.str(), err.str()};
}

TEST(Check, AllInSyncExitsZeroAndListsEveryCheckedField) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  CheckRun r = Check(reader);
  EXPECT_EQ(r.code, kCheckInSync) << r.out << r.err;
  EXPECT_NE(r.out.find("ens1f0np0 (pf 0000:3b:00.0, mlx5_0/1, up): in sync"), std::string::npos)
      << r.out;
  for (const char* field :
       {"trust", "pfc", "dscp_prio", "roce_tos", "dcqcn_np", "dcqcn_rp", "tcp_ecn"})
    EXPECT_NE(r.out.find(std::string("  ") + field), std::string::npos) << field;
  EXPECT_EQ(r.out.find("veth0"), std::string::npos) << "veth is not a RoCE device";
  EXPECT_NE(r.out.find("\n2 devices: 2 in sync\n"), std::string::npos);
  EXPECT_LT(r.out.find("ens1f0np0"), r.out.find("ens1f1np1")) << "sorted by name";
  EXPECT_EQ(reader.tcp_ecn_reads, 1) << "host-wide sysctl read once, not per device";
}

TEST(Check, PfcOffOnPriority3ExplainsWhyAndExitsOne) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  reader.dcb["ens1f1np1"].value.pfc->enabled_mask = 0;
  CheckRun r = Check(reader);
  EXPECT_EQ(r.code, kCheckDrift);
  EXPECT_NE(r.out.find("ens1f1np1 (pf 0000:3b:00.1, mlx5_1/1, up): DRIFT in 1 of 10 fields"),
            std::string::npos)
      << r.out;
  // The item column is as wide as the longest item of the report, "rdma_port mlx5_0/1".
  EXPECT_NE(r.out.find("\n  pfc                DRIFT      expected [3]\n"
                       "                                actual   []\n"
                       "                                why: PFC off on priority 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  cnp_802p_prio      UNVERIFIED expected 6\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  rdma_port mlx5_1/1 ok         ACTIVE\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("actual   []"), std::string::npos);
  EXPECT_NE(r.out.find("why: PFC off on priority 3: RoCE traffic there becomes lossy; expect "
                       "packet drops (rx_prio3_discards), retransmissions and out_of_sequence"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n2 devices: 1 in sync, 1 with drift\n"), std::string::npos);
}

TEST(Check, NoDcbCannotBeVerifiedAndIsNotDrift) {
  std::string path =
      ::testing::TempDir() + "/check_veth_rule_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "devices:\n  - {name: soft-roce, match: {netdev: veth0}}\n";
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  CheckOptions options;
  options.config_path = path;
  options.selection.netdevs = {"ens1f0np0", "veth0"};
  CheckRun r = Check(reader, options);
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_NE(r.out.find("policy rule \"soft-roce\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trust              UNVERIFIED"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("veth0 (other, unknown): in sync (8 fields cannot be verified on this device)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no DCB on this device (EOPNOTSUPP)"), std::string::npos);
}

TEST(Check, DevicesTheDefaultsDoNotCoverAreReportedButNotChecked) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  CheckOptions options;
  options.selection.netdevs = {"ens1f0np0", "veth0"};
  CheckRun r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_NE(r.out.find("policy rule \"none\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(the policy checks no field of this device)"), std::string::npos);
  // Nothing was compared: "not checked", never "in sync" (text and JSON, docs/check.md).
  EXPECT_NE(r.out.find("veth0 (other, unknown): not checked (no policy field applies)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n2 devices: 1 in sync, 1 not checked (no policy field applies)\n"),
            std::string::npos)
      << r.out;
  options.json = true;
  CheckRun j = Check(reader, options);
  EXPECT_EQ(j.code, kCheckInSync) << j.out;
  EXPECT_NE(j.out.find("\"policy_rule\":\"none\",\"roce_port\":null,\"verdict\":\"not_checked\""),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find("\"summary\":{\"checked\":2,\"in_sync\":1,\"drift\":0,\"unknown\":0,"
                       "\"not_checked\":1,\"unconfigured\":0},\"exit_code\":0}"),
            std::string::npos)
      << j.out;
}

TEST(Check, UnreadableOnlyIsAnErrorNotInSync) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  reader.tcp_ecn = Observed<int>::Failed("open /proc/sys/net/ipv4/tcp_ecn: Permission denied");
  CheckRun r = Check(reader);
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_NE(r.out.find("UNKNOWN (1 unreadable)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Permission denied"), std::string::npos);
}

TEST(Check, BadPolicyFileChecksNothingAndExitsTwo) {
  std::string path =
      ::testing::TempDir() + "/check_bad_policy_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "defaults:\n  pfc: [3, 9]\n";
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  CheckOptions options;
  options.config_path = path;
  CheckRun r = Check(reader, options);
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(path + ":2:12: pfc: priority 9 is out of range 0..7"), std::string::npos)
      << r.err;
  EXPECT_EQ(reader.tcp_ecn_reads, 0) << "nothing read with an invalid policy";
}

TEST(Check, PolicyFileRulesApplyPerDevice) {
  std::string path = ::testing::TempDir() + "/check_rules_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "devices:\n  - name: storage\n    match: {pci: \"0000:3b:00.1\"}\n"
                         "    policy: {pfc: [3, 4]}\n";
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  CheckOptions options;
  options.config_path = path;
  CheckRun r = Check(reader, options);
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kCheckDrift);
  EXPECT_NE(r.out.find("policy rule \"storage\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PFC off on priority 4"), std::string::npos);
  EXPECT_NE(r.out.find("1 with drift"), std::string::npos);
}

TEST(Check, LinkSpeedMinimumAndVfCountFromThePolicy) {
  std::string path = ::testing::TempDir() + "/check_link_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "defaults:\n  link_speed_min_mbps: 200000\n  sriov_numvfs: 8\n";
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  reader.link["ens1f0np0"] = {Observed<uint32_t>::Ok(200000), Observed<uint32_t>::Ok(8)};
  reader.link["ens1f1np1"] = {Observed<uint32_t>::Ok(100000), Observed<uint32_t>::Absent()};
  CheckOptions options;
  options.config_path = path;
  options.json = true;
  CheckRun r = Check(reader, options);
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kCheckDrift) << r.out;
  EXPECT_NE(r.out.find("{\"item\":\"link_speed_min_mbps\",\"status\":\"ok\",\"expected\":"
                       "\">= 200000 Mb/s\",\"actual\":\"200000 Mb/s\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"item\":\"link_speed_min_mbps\",\"status\":\"drift\",\"expected\":"
                       "\">= 200000 Mb/s\",\"actual\":\"100000 Mb/s\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"item\":\"sriov_numvfs\",\"status\":\"ok\",\"expected\":\"8\","
                       "\"actual\":\"8\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"item\":\"sriov_numvfs\",\"status\":\"unverified\""), std::string::npos)
      << "a function without SR-IOV cannot be verified: " << r.out;
}

TEST(Check, DiscoveryFailureAndUnknownNetdevAreErrors) {
  FakeReader reader;
  CheckRun r =
      Check(reader, {}, Result<Inventory>(MakeError(ETIMEDOUT, "RTM_GETLINK dump: timed out")));
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_NE(r.err.find("device discovery failed: RTM_GETLINK dump: timed out"), std::string::npos);

  CheckOptions options;
  options.selection.netdevs = {"eth9"};
  r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_NE(r.err.find("no network device \"eth9\""), std::string::npos);
}

TEST(Check, NothingSelectedIsAnErrorSaidOnStderr) {
  FakeReader reader;
  Inventory inv;
  Device lo;
  lo.name = "lo";
  inv.devices.push_back(lo);
  CheckRun r = Check(reader, {}, inv);
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_NE(r.err.find("no RoCE device selected (no Mellanox PF, no RDMA-bound netdev; 1 netdev "
                       "seen; see --collector.device-include)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("\n0 devices\n"), std::string::npos) << r.out;
}

CheckOptions Selecting(const char* include, const char* exclude = nullptr) {
  CheckOptions options;
  if (include) {
    options.selection.include = std::regex(include);
    options.selection.include_text = include;
  }
  if (exclude) {
    options.selection.exclude = std::regex(exclude);
    options.selection.exclude_text = exclude;
  }
  return options;
}

TEST(Check, IncludeRegexSelectsLikeTheDaemon) {
  FakeReader reader;
  CheckRun r = Check(reader, Selecting("veth.*"));
  EXPECT_EQ(r.code, kCheckInSync) << r.out << r.err;  // veth0: rule "none", nothing to differ
  EXPECT_NE(r.out.find("veth0 ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ens1f0np0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n1 device: "), std::string::npos) << r.out;
}

TEST(Check, ExcludeRegexDropsFromTheDefaultSelection) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  CheckRun r = Check(reader, Selecting(nullptr, "ens1f1.*"));
  EXPECT_EQ(r.code, kCheckInSync) << r.out << r.err;
  EXPECT_EQ(r.out.find("ens1f1np1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n1 device: "), std::string::npos) << r.out;

  r = Check(reader, Selecting("ens.*", "ens.*"));
  EXPECT_EQ(r.code, kCheckError);
  EXPECT_NE(r.err.find("no netdev matches --collector.device-include=\"ens.*\" after "
                       "--collector.device-exclude=\"ens.*\""),
            std::string::npos)
      << r.err;
}

TEST(Check, RepeatedNetdevIsCheckedOnce) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  CheckOptions options;
  options.selection.netdevs = {"ens1f0np0", "ens1f0np0"};
  CheckRun r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_NE(r.out.find("\n1 device: "), std::string::npos) << r.out;
}

TEST(Check, RdmaPortNotActiveIsDriftAndUnreportedIsUnverified) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  Inventory inv = TwoNics();
  inv.devices[0].rdma_ports[0].port_state = 1;  // IB_PORT_DOWN on ens1f1np1
  inv.devices[1].rdma_ports[0].port_state = 0;  // no RDMA_NLDEV_ATTR_PORT_STATE
  CheckRun r = Check(reader, {}, inv);
  EXPECT_EQ(r.code, kCheckDrift) << r.out;
  EXPECT_NE(r.out.find("rdma_port mlx5_1/1 DRIFT      expected ACTIVE"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("actual   DOWN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rdma_port mlx5_0/1 UNVERIFIED expected ACTIVE"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 in sync, 1 with drift"), std::string::npos) << r.out;
}

TEST(Check, JsonFollowsSchemaVersionOne) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  reader.dcb["ens1f1np1"].value.pfc->enabled_mask = 0;
  CheckOptions options;
  options.json = true;
  CheckRun r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckDrift);
  const std::string& j = r.out;
  EXPECT_EQ(j.rfind("{\"schema_version\":1,\"policy\":\"", 0), 0u) << j;
  EXPECT_NE(j.find("{\"netdev\":\"ens1f0np0\",\"role\":\"pf\",\"pci\":\"0000:3b:00.0\","
                   "\"rdma_ports\":[\"mlx5_0/1\"],\"policy_rule\":\"default\",\"roce_port\":"
                   "{\"checked\":true,\"reason\":\"configured\",\"detail\":\"configured: pfc [3], "
                   "trust dscp, 64 DSCP APP entries, traffic_class 106 on mlx5_0/1\"},"
                   "\"verdict\":\"in_sync\""),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"verdict\":\"drift\""), std::string::npos) << j;
  EXPECT_NE(j.find("{\"item\":\"pfc\",\"status\":\"drift\",\"expected\":"), std::string::npos) << j;
  EXPECT_NE(j.find("{\"item\":\"rdma_port mlx5_0/1\",\"status\":\"ok\",\"expected\":"
                   "\"ACTIVE\",\"actual\":\"ACTIVE\",\"why\":\"\"}"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"summary\":{\"checked\":2,\"in_sync\":1,\"drift\":1,\"unknown\":0,"
                   "\"not_checked\":0,\"unconfigured\":0},\"exit_code\":1}\n"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find('\033'), std::string::npos);
}

// The RDMA port listing failed: a rule on rdma_device cannot be decided, and the device must not
// be checked against the defaults instead. It counts as unknown (exit 2) and says why.
TEST(Check, AnUndecidableRdmaRuleIsUnknownNotTheDefaults) {
  auto policy = ParsePolicy(
      "devices:\n  - name: storage\n    match: {rdma_device: mlx5_1}\n    policy: {pfc: [4]}\n",
      "rules.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  FakeReader reader;
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  CheckDevice nic{Nic("ens1f1np1", "mlx5_1", "0000:3b:00.1"), {}, {}, {}};
  nic.device.rdma_ports.clear();
  nic.device.rdma_ports_known = false;
  nic.observed = ReadObservedQos(reader, nic.device, reader.ReadTcpEcn());
  std::ostringstream text;
  EXPECT_EQ(RenderCheckReport(*policy, {nic}, false, text), kCheckError);
  EXPECT_NE(text.str().find("UNKNOWN (1 unreadable)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("policy rule \"unresolved\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("actual   rule \"storage\" matches on rdma_device and this device's "
                            "RDMA ports are unknown (the RDMA port listing failed)"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("pfc"), std::string::npos) << "no field is checked";
  std::ostringstream json;
  EXPECT_EQ(RenderCheckJson(*policy, {nic}, json), kCheckError);
  EXPECT_NE(
      json.str().find("\"policy_rule\":\"unresolved\",\"roce_port\":null,\"verdict\":\"unknown\""),
      std::string::npos)
      << json.str();
}

TEST(Check, JsonEscapesStringsAndReportsNothingSelected) {
  PolicySet policy = DefaultPolicy();
  policy.source = "a \"quoted\"\\path\n";
  std::ostringstream out;
  EXPECT_EQ(RenderCheckJson(policy, {}, out), kCheckError);
  EXPECT_EQ(out.str(),
            "{\"schema_version\":1,\"policy\":\"a \\\"quoted\\\"\\\\path\\u000a\",\"devices\":[],"
            "\"summary\":{\"checked\":0,\"in_sync\":0,\"drift\":0,\"unknown\":0,\"not_checked\":0,"
            "\"unconfigured\":0},\"exit_code\":2}\n");
}

TEST(Check, JsonStringsAreValidUtf8) {
  PolicySet policy = DefaultPolicy();
  policy.source = "p\xff\xc3\xa9.yaml";
  std::ostringstream out;
  RenderCheckJson(policy, {}, out);
  EXPECT_NE(out.str().find("\"policy\":\"p\xef\xbf\xbd\xc3\xa9.yaml\""), std::string::npos)
      << out.str();
}

TEST(Check, ColourOnlyWhenAsked) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  EXPECT_EQ(Check(reader).out.find("\033["), std::string::npos);
  CheckOptions options;
  options.color = true;
  EXPECT_NE(Check(reader, options).out.find("\033[32m"), std::string::npos);
}

TEST(PolicyShowDefault, PrintsADocumentThatValidatesToTheDefault) {
  std::ostringstream out;
  EXPECT_EQ(RunPolicyShowDefault(out), 0);
  auto parsed = ParsePolicy(out.str(), "show-default");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->defaults, DefaultPolicy().defaults);
  EXPECT_NE(out.str().find("\nroce_ports: auto\n"), std::string::npos) << out.str();
  EXPECT_EQ(parsed->roce_ports, RocePorts::kAuto);
  auto all = ParsePolicy("roce_ports: all\n", "all.yaml");
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->roce_ports, RocePorts::kAll);
  EXPECT_EQ(ParsePolicy(RenderPolicyYaml(*all), "again")->roce_ports, RocePorts::kAll);
  auto bad = ParsePolicy("version: 1\nroce_ports: some\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "bad.yaml:2:13: roce_ports: \"some\" is not one of auto, all");
}

// --- RoCE ports: the defaults check RoCE ports only (docs/policy.md "RoCE ports") -------------

// ens1f1np1 at factory defaults (an unused second port, a storage port), its RDMA port DOWN.
FakeReader WithAnUnusedPort() {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  QosState factory;
  factory.pfc = PfcState{8, 0, 0, 7};
  reader.dcb["ens1f1np1"] = Observed<QosState>::Ok(factory);
  reader.tos["mlx5_1/1"].mofed_tclass = Observed<std::optional<uint8_t>>::Ok(std::nullopt);
  return reader;
}

Inventory WithPort1Down() {
  Inventory inv = TwoNics();
  inv.devices[0].rdma_ports[0].port_state = 1;  // IB_PORT_DOWN
  return inv;
}

// The kernel's counters as RunCheck reads them: mlx5's vport RoCE packets per netdev.
TrafficLookup Vport(std::map<std::string, uint64_t> packets, std::vector<std::string>* asked) {
  return [packets, asked](const Device& d) {
    asked->push_back(d.name);
    CounterSet set{std::make_shared<const std::vector<std::string>>(
                       std::vector<std::string>{"tx_vport_rdma_unicast_packets"}),
                   {packets.at(d.name)}};
    return RoceTrafficOf(&set, {});
  };
}

CheckRun CheckTraffic(FakeReader& reader, const TrafficLookup& traffic, CheckOptions options = {}) {
  std::ostringstream out, err;
  int code = RunCheckWith(options, WithPort1Down(), reader, out, err, {}, traffic);
  return {code, out.str(), err.str()};
}

TEST(CheckRocePorts, AFactoryDefaultPortWithoutRoceIsUnconfiguredAndCountsNothing) {
  FakeReader reader = WithAnUnusedPort();
  std::vector<std::string> asked;
  CheckRun r = CheckTraffic(reader, Vport({{"ens1f1np1", 0}}, &asked));
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_EQ(asked, std::vector<std::string>{"ens1f1np1"}) << "counters only where they decide";
  EXPECT_NE(r.out.find("ens1f1np1 (pf 0000:3b:00.1, mlx5_1/1, up): UNCONFIGURED (not a RoCE "
                       "port; 5 of 10 items differ from the policy, none counted)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  unconfigured: at factory defaults (PFC off, trust pcp, no DSCP entry, no "
                       "global traffic_class) and no RoCE traffic since the driver loaded\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  pfc                differs    expected [3]\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  rdma_port mlx5_1/1 differs    expected ACTIVE\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  RoCE port: configured: pfc [3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n2 devices: 1 in sync, 1 unconfigured (no RoCE traffic)\n"),
            std::string::npos)
      << r.out;

  CheckOptions json;
  json.json = true;
  CheckRun j = CheckTraffic(reader, Vport({{"ens1f1np1", 0}}, &asked), json);
  EXPECT_EQ(j.code, kCheckInSync) << j.out;
  EXPECT_NE(j.out.find("\"policy_rule\":\"default\",\"roce_port\":{\"checked\":false,"
                       "\"reason\":\"no_roce_traffic\",\"detail\":\"at factory defaults"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find("\"verdict\":\"unconfigured\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"summary\":{\"checked\":2,\"in_sync\":1,\"drift\":0,\"unknown\":0,"
                       "\"not_checked\":0,\"unconfigured\":1},\"exit_code\":0}"),
            std::string::npos)
      << j.out;
}

TEST(CheckRocePorts, RoceTrafficOnAFactoryDefaultPortIsDrift) {
  FakeReader reader = WithAnUnusedPort();
  std::vector<std::string> asked;
  CheckRun r = CheckTraffic(reader, Vport({{"ens1f1np1", 42}}, &asked));
  EXPECT_EQ(r.code, kCheckDrift) << r.out;
  EXPECT_NE(r.out.find("ens1f1np1 (pf 0000:3b:00.1, mlx5_1/1, up): DRIFT in 5 of 10 fields"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  RoCE port: RoCE traffic since the driver loaded "
                       "(tx_vport_rdma_unicast_packets 42)"),
            std::string::npos)
      << r.out;
}

// Without counters (not read, or unreadable) RoCE cannot be ruled out: the port is checked.
TEST(CheckRocePorts, UnknownTrafficIsChecked) {
  FakeReader reader = WithAnUnusedPort();
  std::ostringstream out, err;
  EXPECT_EQ(RunCheckWith({}, WithPort1Down(), reader, out, err), kCheckDrift) << out.str();
  EXPECT_NE(out.str().find("RoCE port: no RoCE counter could be read"), std::string::npos)
      << out.str();
}

// The site names its RoCE ports with a rule, or checks every port with roce_ports: all.
TEST(CheckRocePorts, ARuleOrRocePortsAllChecksTheIdlePort) {
  const std::string dir = ::testing::TempDir();
  const std::string rule = dir + "/check_rule_" + std::to_string(getpid()) + ".yaml";
  const std::string all = dir + "/check_all_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(rule) << "devices:\n  - {name: rails, match: {netdev: \"ens1f[01]np[01]\"}}\n";
  std::ofstream(all) << "roce_ports: all\n";
  for (const std::string& path : {rule, all}) {
    FakeReader reader = WithAnUnusedPort();
    std::vector<std::string> asked;
    CheckOptions options;
    options.config_path = path;
    CheckRun r = CheckTraffic(reader, Vport({{"ens1f1np1", 0}}, &asked), options);
    EXPECT_EQ(r.code, kCheckDrift) << path << r.out;
    EXPECT_TRUE(asked.empty()) << "the counters decide nothing there";
    EXPECT_NE(r.out.find(path == rule ? "RoCE port: policy rule \"rails\" names it"
                                      : "RoCE port: roce_ports: all"),
              std::string::npos)
        << r.out;
  }
  std::filesystem::remove(rule);
  std::filesystem::remove(all);
}

// No global traffic_class: the message says what that means, and roce_tos: null opts out.
TEST(CheckRocePorts, AnUnsetTrafficClassSaysWhatItMeansAndOptsOutInOneLine) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.tos["mlx5_0/1"].mofed_tclass = Observed<std::optional<uint8_t>>::Ok(std::nullopt);
  CheckOptions options;
  options.selection.netdevs = {"ens1f0np0"};
  CheckRun r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckDrift) << r.out;
  EXPECT_NE(r.out.find("actual   mlx5_0/1=not set\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("why: no global traffic_class is set: QPs that set no ToS of their own go "
                       "out with DSCP 0, so no PFC and no DCQCN"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("RoCE QPs are created"), std::string::npos) << "the QPs are not to blame";

  const std::string path = ::testing::TempDir() + "/check_tos_" + std::to_string(getpid());
  std::ofstream(path) << "defaults:\n  roce_tos: null\n";
  options.config_path = path;
  r = Check(reader, options);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_EQ(r.out.find("roce_tos"), std::string::npos) << r.out;
  std::filesystem::remove(path);

  // A ToS that is set and wrong is another story.
  reader.tos["mlx5_0/1"].mofed_tclass = Observed<std::optional<uint8_t>>::Ok(0);
  options.config_path.clear();
  r = Check(reader, options);
  EXPECT_NE(r.out.find("actual   mlx5_0/1=0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("why: the default ToS differs"), std::string::npos) << r.out;
}

// --- The switch items (LLDP) -----------------------------------------------------------------

LldpState LeafFor(const std::string& netdev, uint8_t pfc_mask) {
  LldpState state;
  state.view.emplace();
  lldp::Neighbor leaf;
  leaf.chassis_id = "0c:29:aa:bb:cc:01";
  leaf.system_name = "leaf01";
  leaf.port_id = "Ethernet12";
  leaf.max_frame_size = 9216;
  leaf.dcbx.pfc_configuration = lldp::PfcConfiguration();
  leaf.dcbx.pfc_configuration->cap = 8;
  leaf.dcbx.pfc_configuration->enabled_mask = pfc_mask;
  state.view->ports[netdev].neighbors.push_back(leaf);
  return state;
}

CheckRun CheckWithLldp(FakeReader& reader, const LldpState& state, bool json = false) {
  std::ostringstream out, err;
  CheckOptions options;
  options.json = json;
  int code = RunCheckWith(options, TwoNics(), reader, out, err,
                          [&](const std::vector<std::string>&) { return state; });
  return {code, out.str(), err.str()};
}

TEST(CheckSwitch, TheNeighbourLineAndAMismatchIsDrift) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  CheckRun agree = CheckWithLldp(reader, LeafFor("ens1f0np0", 0x08));
  EXPECT_EQ(agree.code, kCheckInSync) << agree.out;
  EXPECT_NE(agree.out.find("leaf01 Ethernet12 (chassis 0c:29:aa:bb:cc:01)"), std::string::npos)
      << agree.out;

  CheckRun differ = CheckWithLldp(reader, LeafFor("ens1f0np0", 0x18));
  EXPECT_EQ(differ.code, kCheckDrift) << differ.out;
  EXPECT_NE(differ.out.find("switch pfc"), std::string::npos) << differ.out;
  EXPECT_NE(differ.out.find("[3, 4]"), std::string::npos) << differ.out;
}

TEST(CheckSwitch, NoNeighbourIsUnverifiedNeverDrift) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  LldpState empty;
  empty.view.emplace();
  empty.view->ports["ens1f0np0"] = {};
  empty.view->ports["ens1f1np1"] = {};
  CheckRun r = CheckWithLldp(reader, empty, true);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_NE(r.out.find("\"item\":\"switch\",\"status\":\"unverified\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no LLDP frame received"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"item\":\"switch mtu\",\"status\":\"unverified\""), std::string::npos)
      << r.out;
}

TEST(CheckSwitch, ASecondNeighbourIsDriftAndTheFirstIsCompared) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  LldpState two = LeafFor("ens1f0np0", 0x08);
  lldp::Neighbor hub;
  hub.system_name = "hub07";
  hub.port_id = "p1";
  two.view->ports["ens1f0np0"].neighbors.push_back(hub);
  CheckRun r = CheckWithLldp(reader, two);
  EXPECT_EQ(r.code, kCheckDrift) << r.out;
  EXPECT_NE(r.out.find("2 neighbours; compared: leaf01 Ethernet12"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("several LLDP agents on one RoCE port"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hub07"), std::string::npos) << r.out;  // only the first is compared
}

TEST(CheckSwitch, AnUnreadablePortShowsLldpdsErrorForThatPortOnly) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  LldpState state = LeafFor("ens1f0np0", 0x08);
  state.view->ports["ens1f1np1"].error = "lldpd socket /s: port ens1f1np1: Not found";
  CheckRun r = CheckWithLldp(reader, state, true);
  EXPECT_EQ(r.code, kCheckInSync) << r.out;
  EXPECT_NE(r.out.find("lldpd socket /s: port ens1f1np1: Not found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leaf01 Ethernet12"), std::string::npos) << r.out;
}

TEST(CheckSwitch, NoLldpdOnTheNodeAddsNoItems) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  for (LldpAbsence absence : {LldpAbsence::kLldpdNotInstalled, LldpAbsence::kLldpdNotRunning}) {
    LldpState none;
    none.failure = absence;
    CheckRun r = CheckWithLldp(reader, none);
    EXPECT_EQ(r.out.find("switch"), std::string::npos) << r.out;
  }
  LldpState refused;
  refused.failure = LldpAbsence::kPermissionDenied;
  CheckRun r = CheckWithLldp(reader, refused);
  EXPECT_NE(r.out.find("group _lldpd"), std::string::npos) << r.out;
  EXPECT_EQ(r.code, kCheckInSync);
}

// The GID items come after the switch's; an address without its RoCE v2 GID is drift (exit 1)
// and the report names it.
TEST(Check, AnAddressWithoutARoceV2GidIsDriftNamingTheAddress) {
  FakeReader reader;
  reader.AddGoodNic("ens1f0np0", "mlx5_0");
  reader.AddGoodNic("ens1f1np1", "mlx5_1");
  GidLookup gids = [](const std::vector<Device>& devices) {
    std::map<std::string, std::vector<CheckItem>> items;
    for (const Device& d : devices) items[d.name] = {{"gids", FieldStatus::kInSync, "", "", ""}};
    items["ens1f0np0"] = {{"gids 192.0.2.1", FieldStatus::kDrift, "a RoCE v2 GID on ens1f0np0",
                           "no GID (no_gid)", "why"}};
    return items;
  };
  std::ostringstream out, err;
  const int code = RunCheckWith({}, TwoNics(), reader, out, err, {}, {}, gids);
  EXPECT_EQ(code, kCheckDrift) << out.str();
  EXPECT_NE(out.str().find("gids 192.0.2.1"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("no GID (no_gid)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("1 with drift"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace roceqos
