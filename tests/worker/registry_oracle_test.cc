// The equivalence oracle for every registered strategy: whatever
// StrategyRegistry::List() holds when linked with //worker:all_strategies
// runs with N = 2 workers of batch b (baseline, the one-worker reference
// itself, with N = 1) against one worker of batch N*b, with the parameter
// servers its ServerNeed asks for (one: 1, sharded: 2), and must meet its
// declared StrategyInfo::oracle_tolerance (1e-5 = float32 rounding unless
// registered with RINGSIDE_REGISTER_STRATEGY_WITH_TOLERANCE). A new
// strategy is covered here as soon as it is registered.
//
// Default SyncOptions apply: async_ps therefore runs with staleness 0, where
// it must equal sps; its tau > 0 behaviour (not equivalent by design) is
// checked for bounded staleness and convergence in
// async_ps_strategy_test.cc. hierarchical runs with every rank on one host
// (no launcher variables in the test environment); pretend hosts are in
// hierarchical_strategy_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

std::vector<std::string> RegisteredNames() {
  std::vector<std::string> names;
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    names.push_back(info.name);
  }
  return names;
}

int ServersFor(ServerNeed need) {
  switch (need) {
    case ServerNeed::kNone:
      return 0;
    case ServerNeed::kOne:
      return 1;
    case ServerNeed::kSharded:
      return 2;
  }
  return 0;
}

class RegistryOracleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistryOracleTest, MeetsItsDeclaredTolerance) {
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find(GetParam());
  ASSERT_TRUE(info.ok()) << info.status();
  const int n = info->name == "baseline" ? 1 : 2;
  OracleSetup setup;
  setup.num_servers = ServersFor(info->servers);
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, info->name, n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference, info->oracle_tolerance))
      << info->name << " declares tolerance " << info->oracle_tolerance;
  RecordProperty("oracle_tolerance", std::to_string(info->oracle_tolerance));
  RecordProperty("relative_l2_error",
                 std::to_string(RelativeL2(run->params[0], reference->params)));
}

INSTANTIATE_TEST_SUITE_P(
    Registered, RegistryOracleTest, ::testing::ValuesIn(RegisteredNames()),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param;
    });

TEST(RegistryTest, ListsEveryStrategyOfTheProduct) {
  const std::vector<std::string> names = RegisteredNames();
  for (const char* want :
       {"baseline", "sps", "dps", "ring", "fusion", "async_ps", "ring_fp16",
        "hierarchical", "zero1", "zero2", "zero3"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end())
        << want << " is not registered";
  }
  EXPECT_EQ(names.front(), "baseline");
}

TEST(RegistryTest, TolerancesArePositiveAndAtMostOnePercent) {
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    EXPECT_GT(info.oracle_tolerance, 0) << info.name;
    EXPECT_LE(info.oracle_tolerance, 1e-2) << info.name;
  }
  EXPECT_EQ(StrategyRegistry::Find("sps")->oracle_tolerance, 1e-5);
  EXPECT_EQ(StrategyRegistry::Find("ring_fp16")->oracle_tolerance, 1e-2);
}

}  // namespace
}  // namespace ringside::testing
