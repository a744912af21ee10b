#include "exporter/sampling/lldp_poller.h"

#include <gtest/gtest.h>

#include <cerrno>

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
  for (std::string_view reason : {"lldpd_not_installed", "lldpd_not_running", "permission_denied",
                                  "lldpd_incompatible", "lldpd_error", "malformed_tlv"})
    EXPECT_EQ(state->errors.at(std::string(reason)), 0u) << reason;
  EXPECT_FALSE(state->errors.contains("no_frame"));
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
