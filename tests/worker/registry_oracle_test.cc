// The equivalence oracle for every registered strategy: whatever
// StrategyRegistry::List() holds when linked with
// //worker/strategies:all_strategies runs with N = 2 workers of batch b
// (baseline, the one-worker reference itself, with N = 1) against one
// worker of batch N*b, with the parameter servers its ServerNeed asks for
// (one: 1, sharded: 2), and must meet its declared
// StrategyInfo::oracle_tolerance (1e-5 = float32 rounding unless registered
// with .Tolerance). A new strategy is covered here as soon as it is
// registered.
//
// Each strategy runs four times: as is; with gradient accumulation over
// k = 2 and k = 3 passes per step (N workers x b x k against one worker of
// batch N*b*k; with k = 2 the workers also evaluate every 3 steps, which
// must leave training unchanged: zero3 gathers and frees its parameters for
// it); and with a 3-update learning-rate warm-up (which the parameter
// servers receive in the optimizer config and must apply as the reference
// does).
//
// A lossy strategy runs with the options its registration gives the oracle
// (StrategyInfo::oracle_options: its compression off, e.g. PowerSGD at full
// rank), and under its OracleOptimizer when it names one (else SGD +
// momentum; both SetUpForStrategy's); one with no such setting
// (NoExactSetting: ring_sign) must keep its ranks bit-identical and train
// (MeetsItsOracle), its gap recorded. Otherwise default SyncOptions apply:
// async_ps therefore runs with staleness 0, where it must equal sps; its
// tau > 0 behaviour (not equivalent by design) is checked for bounded
// staleness and convergence in async_ps_strategy_test.cc. hierarchical runs
// with every rank on one host (no launcher variables in the test
// environment); pretend hosts are in hierarchical_strategy_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
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

// One oracle case: the strategy, passes per step and warm-up updates.
struct Case {
  std::string strategy;
  int64_t accumulate_steps = 1;
  int64_t lr_warmup_steps = 0;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.strategy << " with " << c.accumulate_steps << " pass(es) a step, "
      << c.lr_warmup_steps << " warm-up updates";
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const std::string& name : RegisteredNames()) {
    cases.push_back({name, 1, 0});
    cases.push_back({name, 2, 0});
    cases.push_back({name, 3, 0});
    cases.push_back({name, 1, 3});
  }
  return cases;
}

class RegistryOracleTest : public ::testing::TestWithParam<Case> {};

TEST_P(RegistryOracleTest, MeetsItsDeclaredTolerance) {
  absl::StatusOr<StrategyInfo> info =
      StrategyRegistry::Find(GetParam().strategy);
  ASSERT_TRUE(info.ok()) << info.status();
  const int n = info->name == "baseline" ? 1 : 2;
  OracleSetup setup;
  SetUpForStrategy(*info, setup);
  setup.accumulate_steps = GetParam().accumulate_steps;
  if (setup.accumulate_steps == 2) setup.eval_every = 3;
  setup.optimizer.lr_warmup_steps = GetParam().lr_warmup_steps;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, info->name, n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MeetsItsOracle(*info, setup, n, *run, *reference));
  RecordProperty("oracle_tolerance", std::to_string(info->oracle_tolerance));
  RecordProperty("relative_l2_error",
                 std::to_string(RelativeL2(run->params[0], reference->params)));
}

INSTANTIATE_TEST_SUITE_P(
    Registered, RegistryOracleTest, ::testing::ValuesIn(Cases()),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.strategy;
      if (info.param.accumulate_steps > 1) {
        name += "_accumulate" + std::to_string(info.param.accumulate_steps);
      }
      if (info.param.lr_warmup_steps > 0) {
        name += "_warmup" + std::to_string(info.param.lr_warmup_steps);
      }
      return name;
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
    if (!info.exact_setting) continue;  // its oracle checks that it trains
    EXPECT_GT(info.oracle_tolerance, 0) << info.name;
    EXPECT_LE(info.oracle_tolerance, 1e-2) << info.name;
  }
  EXPECT_EQ(StrategyRegistry::Find("sps")->oracle_tolerance, 1e-5);
  EXPECT_EQ(StrategyRegistry::Find("ring_fp16")->oracle_tolerance, 1e-2);
}

}  // namespace
}  // namespace ringside::testing
