// The equivalence oracle for sps: N workers of batch b against one worker
// of batch N*b, N in {1, 2, 4}, with SGD + momentum and with Adam.
#include <gtest/gtest.h>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

class SpsOracleTest
    : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(SpsOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [n, optimizer] = GetParam();
  OracleSetup setup;
  setup.num_servers = 1;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "sps", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  // The run moved away from the initial parameters (the test can fail).
  OracleSetup fresh = setup;
  fresh.steps = 1;
  absl::StatusOr<TrainResult> one_step = RunReference(fresh, n);
  ASSERT_TRUE(one_step.ok());
  EXPECT_GT(RelativeL2(one_step->params, reference->params), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(WorkersAndOptimizers, SpsOracleTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values("sgd", "adam")));

TEST(SpsStrategyTest, RejectsMoreThanOneServer) {
  OracleSetup setup;
  setup.num_servers = 2;
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "sps", 1);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("exactly one parameter server"),
            std::string::npos)
      << run.status();
}

}  // namespace
}  // namespace ringside::testing
