// The equivalence oracle for zero1 and zero2 (ZeRO stages 1 and 2, Gloo on
// CPU): N in {1, 2, 3, 4} workers of batch b against one worker of batch
// N*b, with SGD + momentum and with Adam; every rank ends with
// bit-identical parameters. N = 3 cuts the flat buffer into shards of
// unequal length.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

using Param = std::tuple<std::string, int, std::string>;

class ZeroOracleTest : public ::testing::TestWithParam<Param> {};

TEST_P(ZeroOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [strategy, n, optimizer] = GetParam();
  OracleSetup setup;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, strategy, n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    StagesWorkersOptimizers, ZeroOracleTest,
    ::testing::Combine(::testing::Values("zero1", "zero2"),
                       ::testing::Values(1, 2, 3, 4),
                       ::testing::Values("sgd", "adam")),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(std::get<0>(info.param), "_",
                          std::get<1>(info.param), "workers_",
                          std::get<2>(info.param));
    });

}  // namespace
}  // namespace ringside::testing
