// The command line around the subcommands: check's help, the policy usage line, `policy validate`,
// and a flag given more than once (exporter/app/subcommands.cc, cli.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "exporter/app/cli.h"
#include "exporter/app/policy_validate.h"
#include "tests/unit/support/parsed_command_line.h"

namespace roceqos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A policy file in the test's temporary directory, removed with the object.
class PolicyFile {
 public:
  PolicyFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + name) {
    std::ofstream(path_) << text;
  }
  ~PolicyFile() { std::remove(path_.c_str()); }
  PolicyFile(const PolicyFile&) = delete;
  PolicyFile& operator=(const PolicyFile&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

TEST(Subcommands, CheckHelpListsTheDaemonFlagsCheckReads) {
  const Parsed p = Parse({"check", "--help"});
  EXPECT_EQ(p.outcome.exit_code, 0);
  for (const char* flag :
       {"--config TEXT", "--collector.device-include TEXT", "--collector.device-exclude TEXT",
        "--replay TEXT", "--lldp.socket TEXT", "--lldp.interval TEXT", "--qos.configfs-tos ",
        "--path.procfs TEXT", "--log.level TEXT ", "--log.format TEXT "}) {
    EXPECT_THAT(p.out, HasSubstr(std::string("\n  ") + flag)) << p.out;
  }
  // Flags check ignores are not offered.
  EXPECT_THAT(p.out, Not(HasSubstr("--web.listen-address")));
}

TEST(Subcommands, PolicyUsageLineHasNoEmptyBrackets) {
  const Parsed p = Parse({"policy", "--help"});
  EXPECT_THAT(p.out, HasSubstr("Usage: roce_qos_exporter policy [OPTIONS] SUBCOMMAND\n"));
  EXPECT_THAT(p.out, Not(HasSubstr("[]")));
  EXPECT_THAT(Parse({"policy", "validate", "--help"}).out,
              HasSubstr("Usage: roce_qos_exporter policy validate [OPTIONS] FILE...\n"));
}

TEST(Subcommands, AFlagGivenTwiceIsNamed) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"--sampler.period=1s", "--sampler.period=2s"}, "--sampler.period given twice"},
           {{"check", "--config=a", "--config=b"}, "--config given twice"},
           {{"check", "--json", "--json"}, "--json given twice"},
           {{"--qos.configfs-tos", "--web.enable-lifecycle", "--qos.configfs-tos"},
            "--qos.configfs-tos given twice"},
           {{"--log.level=info", "--log.level=warn", "--log.level=info"},
            "--log.level given 3 times"}}) {
    const Parsed p = Parse(args);
    EXPECT_EQ(p.outcome.kind, CliOutcome::Kind::kExit);
    EXPECT_EQ(p.outcome.exit_code, kExitUsage);
    EXPECT_EQ(p.err, "roce_qos_exporter: " + message + ": give it once (see --help)\n");
  }
  // A repeatable option is not refused.
  const Parsed netdevs = Parse({"check", "--netdev", "a", "--netdev", "b"});
  EXPECT_EQ(netdevs.outcome.kind, CliOutcome::Kind::kSubcommand) << netdevs.err;
}

TEST(Subcommands, PolicyValidateNeedsNoDevice) {
  PolicyFile good("good.yaml",
                  "version: 1\ndefaults: {pfc: [3]}\ndevices:\n"
                  "  - name: gpu\n    match: {netdev: \"ens.*\"}\n    policy: {pfc: [3, 4]}\n");
  PolicyFile bad("bad.yaml", "version: 1\ndefaults:\n  pfc: [3, 9]\n");
  const Parsed p = Parse({"policy", "validate", good.path(), bad.path()});
  ASSERT_EQ(p.outcome.kind, CliOutcome::Kind::kSubcommand) << p.err;
  std::ostringstream out, err;
  EXPECT_EQ(p.outcome.subcommand(p.outcome.config, out, err), kPolicyInvalid);
  EXPECT_EQ(out.str(),
            std::string(good.path()) + ": OK (defaults and 1 device rule: \"gpu\" at line 4)\n");
  EXPECT_THAT(err.str(), HasSubstr(std::string(bad.path()) + ":3:"));
  EXPECT_THAT(err.str(), HasSubstr("priority 9"));

  std::ostringstream alone_out, alone_err;
  EXPECT_EQ(RunPolicyValidate(good.path(), alone_out, alone_err), kPolicyValid);
  EXPECT_EQ(alone_err.str(), "");
  EXPECT_EQ(Parse({"policy", "validate"}).outcome.exit_code, kExitUsage);
}

TEST(Subcommands, RulesThatCanNeverApplyAreWarned) {
  PolicyFile file("shadow.yaml",
                  "version: 1\ndevices:\n"
                  "  - name: nic0\n    match: {pci: \"0000:3b:00.0\"}\n"
                  "  - name: nic0-ens\n    match: {pci: \"0000:3b:00.0\", netdev: \"ens.*\"}\n"
                  "  - name: mlx5_2\n    match: {rdma_device: mlx5_2}\n"
                  "  - name: other-pci\n    match: {pci: \"0000:3b:00.1\", netdev: \"ens.*\"}\n"
                  "  - name: mlx5_2-again\n    match: {rdma_device: mlx5_2}\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunPolicyValidate(file.path(), out, err), kPolicyValid);
  const std::string path = file.path();
  EXPECT_EQ(out.str(),
            path +
                ": OK (defaults and 5 device rules: \"nic0\" at line 3, \"nic0-ens\" at line 5, "
                "\"mlx5_2\" at line 7, \"other-pci\" at line 9, \"mlx5_2-again\" at line 11)\n" +
                path +
                ":5: warning: rule \"nic0-ens\" never applies: rule \"nic0\" (line 3) comes first "
                "and matches every device it matches\n" +
                path +
                ":11: warning: rule \"mlx5_2-again\" never applies: rule \"mlx5_2\" (line 7) "
                "comes first and matches every device it matches\n");
}

}  // namespace
}  // namespace roceqos
