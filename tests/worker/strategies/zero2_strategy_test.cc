// The equivalence oracle for zero2 (ZeRO stage 2, Gloo on CPU): N in
// {1, 2, 3, 4} workers of batch b against one worker of batch N*b, with
// SGD + momentum and with Adam; every rank ends with bit-identical
// parameters. N = 3 cuts the flat buffer into shards of unequal length.
#include <gtest/gtest.h>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

class Zero2OracleTest
    : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(Zero2OracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [n, optimizer] = GetParam();
  OracleSetup setup;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "zero2", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    WorkersAndOptimizers, Zero2OracleTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4),
                       ::testing::Values("sgd", "adam")));

}  // namespace
}  // namespace ringside::testing
