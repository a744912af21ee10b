#include "exporter/sampling/lldp_poller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <map>

#include "tests/unit/support/lldp_neighbors.h"

namespace roceqos {
namespace {

using lldp_test::Named;

lldp::LldpdView OneNeighbor() {
  lldp::LldpdView view;
  lldp::LocalPort port;
  port.frames_received = 12;
  port.neighbors.push_back(Named("leaf01", "Ethernet12"));
  view.ports["eth0"] = port;
  return view;
}

TEST(LldpPollerTest, PublishesTheAnswerForTheSelectedNetdevs) {
  std::vector<std::string> asked;
  LldpPoller poller(
      {.interval = std::chrono::seconds(7), .query = {.socket_path = "/run/test.sock"}},
      [] {
        return std::vector<std::string>{"eth0", "eth1"};
      },
      [&](const lldp::LldpdQuery& query,
          const std::vector<std::string>& netdevs) -> Result<lldp::LldpdView> {
        EXPECT_EQ(query.socket_path, "/run/test.sock");
        asked = netdevs;
        return OneNeighbor();
      });
  EXPECT_EQ(poller.Latest(), nullptr);
  poller.PollOnce();
  const auto state = poller.Latest();
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(asked, (std::vector<std::string>{"eth0", "eth1"}));
  ASSERT_TRUE(state->view);
  EXPECT_EQ(FindLldpNeighbor(*state, "eth0")->system_name, "leaf01");
  EXPECT_EQ(state->queries, 1u);
  EXPECT_EQ(state->interval_seconds, 7);
  EXPECT_GT(state->read_at_unix, 0);
  // Every reason is there from the start, at 0.
  for (std::string_view reason :
       {"lldpd_not_installed", "lldpd_not_running", "lldpd_socket_stale", "permission_denied",
        "lldpd_incompatible", "lldpd_error", "malformed_tlv"})
    EXPECT_EQ(state->errors.at(std::string(reason)), 0u) << reason;
  EXPECT_FALSE(state->errors.contains("no_frame"));
}

TEST(LldpPollerTest, ReadsTheGidsOfNetdevsWhoseNeighbourAdvertisesAFrameSizeOnly) {
  lldp::LldpdView view = OneNeighbor();  // eth0: leaf01 without a Maximum Frame Size TLV
  view.ports["eth1"].neighbors.push_back(lldp_test::Leaf());  // MFS 9216
  view.ports["eth2"];                                         // no neighbour
  std::vector<std::vector<std::string>> reads;
  LldpPoller poller(
      {},
      [] {
        return std::vector<std::string>{"eth0", "eth1", "eth2"};
      },
      [&](const lldp::LldpdQuery&, const std::vector<std::string>&) -> Result<lldp::LldpdView> {
        return view;
      });
  poller.PollOnce();
  EXPECT_TRUE(poller.Latest()->roce_gids.empty());  // no reader: GIDs unknown
  poller.SetRoceGidReader([&](const std::vector<std::string>& netdevs) {
    reads.push_back(netdevs);
    std::map<std::string, NetdevRoceGids> gids;
    gids["eth1"] = NetdevRoceGids::Ok(
        {RoceGid{1, "fe80:0000:0000:0000:0000:0000:0000:0001", GidType::kRoceV2, "eth1.100"}});
    return gids;
  });
  poller.PollOnce();
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0], std::vector<std::string>{"eth1"});
  const auto state = poller.Latest();
  ASSERT_EQ(state->roce_gids.size(), 1u);
  EXPECT_EQ(state->roce_gids.at("eth1").value.at(0).netdev, "eth1.100");

  view.ports["eth1"].neighbors.clear();  // nothing to compare a frame size with: nothing read
  poller.PollOnce();
  EXPECT_EQ(reads.size(), 1u);
  EXPECT_TRUE(poller.Latest()->roce_gids.empty());
}

TEST(LldpPollerTest, AFailedQueryNamesItsReasonAndCountsIt) {
  int errnum = ENOENT;
  LldpPoller poller(
      {}, [] { return std::vector<std::string>{"eth0"}; },
      [&](const lldp::LldpdQuery&, const std::vector<std::string>&) -> Result<lldp::LldpdView> {
        return MakeError(errnum, "connect: boom");
      });
  poller.PollOnce();
  EXPECT_FALSE(poller.Latest()->view);
  EXPECT_EQ(poller.Latest()->failure, LldpAbsence::kLldpdNotRunning);
  EXPECT_EQ(poller.Latest()->failure_message, "connect: boom");
  errnum = EACCES;
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->failure, LldpAbsence::kPermissionDenied);
  EXPECT_EQ(poller.Latest()->errors.at("lldpd_not_running"), 1u);
  EXPECT_EQ(poller.Latest()->errors.at("permission_denied"), 1u);
  EXPECT_EQ(poller.Latest()->queries, 2u);
}

TEST(LldpPollerTest, ARefusedConnectOnAReplacedSocketIsStale) {
  int errnum = ECONNREFUSED;
  bool replaced = true;
  std::vector<std::string> checked;
  LldpPoller poller(
      {.query = {.socket_path = "/run/lldpd.socket"}},
      [] { return std::vector<std::string>{"eth0"}; },
      [&](const lldp::LldpdQuery&, const std::vector<std::string>&) -> Result<lldp::LldpdView> {
        return MakeError(errnum, "connect /run/lldpd.socket: Connection refused");
      },
      [&](const std::string& path) {
        checked.push_back(path);
        return replaced;
      });
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->failure, LldpAbsence::kLldpdSocketStale);
  EXPECT_EQ(poller.Latest()->errors.at("lldpd_socket_stale"), 1u);
  EXPECT_EQ(checked, (std::vector<std::string>{"/run/lldpd.socket"}));
  // lldpd stopped for good: nobody listens at the path, the old socket is simply dead.
  replaced = false;
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->failure, LldpAbsence::kLldpdNotRunning);
  // No socket at the path at all: not a replaced one, and not asked.
  errnum = ENOENT;
  replaced = true;
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->failure, LldpAbsence::kLldpdNotRunning);
  EXPECT_EQ(checked.size(), 2u);
  EXPECT_EQ(poller.Latest()->errors.at("lldpd_not_running"), 2u);
  EXPECT_EQ(poller.Latest()->errors.at("lldpd_socket_stale"), 1u);
}

TEST(LldpPollerTest, MalformedTlvsAreCounted) {
  lldp::LldpdView view = OneNeighbor();
  view.ports["eth0"].neighbors[0].tlv_errors = {"bad PFC", "bad APP"};
  LldpPoller poller(
      {}, [] { return std::vector<std::string>{"eth0"}; },
      [&](const lldp::LldpdQuery&, const std::vector<std::string>&) -> Result<lldp::LldpdView> {
        return view;
      });
  poller.PollOnce();
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->errors.at("malformed_tlv"), 4u);
}

// Answers with `view`'s ports among the netdevs asked about, as lldpd does.
struct ScriptedLldpd {
  lldp::LldpdView view;
  Result<lldp::LldpdView> operator()(const lldp::LldpdQuery&,
                                     const std::vector<std::string>& netdevs) const {
    lldp::LldpdView answer;
    for (const auto& [name, port] : view.ports)
      if (std::find(netdevs.begin(), netdevs.end(), name) != netdevs.end())
        answer.ports[name] = port;
    return answer;
  }
};

TEST(LldpPollerTest, EachPortsFaultsAreCountedAgainstThatPortOnly) {
  lldp::LldpdView view = OneNeighbor();
  view.ports["eth1"].error = "port eth1: not found";
  view.ports["eth2"].neighbors.push_back(Named("leaf02", "Ethernet2"));
  auto& app = view.ports["eth2"].neighbors[0].dcbx.application_priority.emplace();
  app.skipped = {"APP entry 1 has reserved selector 0", "APP entry 2 maps DSCP 64, beyond 63"};
  view.ports["eth2"].neighbors[0].tlv_errors = {"bad PFC"};
  std::vector<std::string> selected{"eth0", "eth1", "eth2"};
  LldpPoller poller(
      {}, [&] { return selected; }, ScriptedLldpd{view});
  poller.PollOnce();
  poller.PollOnce();
  const auto state = poller.Latest();
  EXPECT_EQ(state->port_errors.at("eth0"),
            (std::map<std::string, uint64_t, std::less<>>{
                {"malformed_app_entry", 0}, {"malformed_tlv", 0}, {"port_unreadable", 0}}));
  EXPECT_EQ(state->port_errors.at("eth1").at("port_unreadable"), 2u);
  EXPECT_EQ(state->port_errors.at("eth1").at("malformed_app_entry"), 0u);
  EXPECT_EQ(state->port_errors.at("eth2").at("port_unreadable"), 0u);
  EXPECT_EQ(state->port_errors.at("eth2").at("malformed_app_entry"), 4u);
  EXPECT_EQ(state->port_errors.at("eth2").at("malformed_tlv"), 2u);
  EXPECT_EQ(state->errors.at("malformed_tlv"), 2u);
  // The round itself succeeded: no query error.
  EXPECT_EQ(state->errors.at("lldpd_error"), 0u);
  EXPECT_TRUE(state->view);

  selected = {"eth0"};  // eth1 and eth2 leave the selection: their counts go with them
  poller.PollOnce();
  EXPECT_EQ(poller.Latest()->port_errors.size(), 1u);
  EXPECT_TRUE(poller.Latest()->port_errors.contains("eth0"));
}

TEST(LldpPollerTest, ErrnoToReason) {
  EXPECT_EQ(LldpQueryFailure(MakeError(ELIBACC, "")), LldpAbsence::kLldpdNotInstalled);
  EXPECT_EQ(LldpQueryFailure(MakeError(ECONNREFUSED, "")), LldpAbsence::kLldpdNotRunning);
  EXPECT_EQ(LldpQueryFailure(MakeError(EPERM, "")), LldpAbsence::kPermissionDenied);
  EXPECT_EQ(LldpQueryFailure(MakeError(ETIMEDOUT, "")), LldpAbsence::kLldpdError);
  EXPECT_EQ(LldpQueryFailure(MakeError(0, "garbage")), LldpAbsence::kLldpdError);
  EXPECT_EQ(LldpQueryFailure(MakeError(EPROTO, "")), LldpAbsence::kLldpdIncompatible);
}

// An lldpd of another version is its own reason, counted, never an empty view.
TEST(LldpPollerTest, AnIncompatibleLldpdIsNamedAndCounted) {
  LldpPoller poller(
      {}, [] { return std::vector<std::string>{"eth0"}; },
      [](const lldp::LldpdQuery&, const std::vector<std::string>&) -> Result<lldp::LldpdView> {
        return MakeError(EPROTO, "port eth0: too small for structure lldpd_hardware");
      });
  poller.PollOnce();
  const auto state = poller.Latest();
  EXPECT_FALSE(state->view);
  EXPECT_EQ(state->failure, LldpAbsence::kLldpdIncompatible);
  EXPECT_EQ(LldpNeighborAbsence(*state, "eth0", true), LldpAbsence::kLldpdIncompatible);
  EXPECT_EQ(state->errors.at("lldpd_incompatible"), 1u);
  EXPECT_EQ(state->errors.at("lldpd_error"), 0u);
}

}  // namespace
}  // namespace roceqos
