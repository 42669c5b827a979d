// ring_topk's, ring_sign's and ring_onebit_adam's plain steps first
// (--compression_start_step, compression_start_options.h; 1-bit Adam's
// under Adam, the optimizer it needs):
//  - those steps are ring's exactly (a plain float32 average), one step
//    past them compression changes the result;
//  - the row's variant names them; a negative count is refused by flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/oracle_harness.h"
#include "worker/strategies/allreduce/compression_start_options.h"

namespace ringside::testing {
namespace {

class CompressionStartTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompressionStartTest, StartStepsAreRingsExactly) {
  constexpr int kN = 2;
  OracleSetup setup;
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find(GetParam());
  ASSERT_TRUE(info.ok()) << info.status();
  UseOracleOptimizer(*info, setup);
  CompressionStartOptions start;
  start.start_step = 4;
  setup.sync.strategy.Set(start);
  setup.steps = 4;
  absl::StatusOr<OracleRun> ring = RunWorkers(setup, "ring", kN);
  ASSERT_TRUE(ring.ok()) << ring.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, GetParam(), kN);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->params[0], ring->params[0]);
  EXPECT_EQ(run->params[1], ring->params[1]);
  EXPECT_EQ(run->final_records[0].value("variant", ""), "4 exact first");
  setup.steps = 5;
  ring = RunWorkers(setup, "ring", kN);
  run = RunWorkers(setup, GetParam(), kN);
  ASSERT_TRUE(ring.ok() && run.ok());
  EXPECT_NE(run->params[0], ring->params[0]);
  EXPECT_EQ(run->params[0], run->params[1]) << "ranks agree";
}

INSTANTIATE_TEST_SUITE_P(GatherHooks, CompressionStartTest,
                         ::testing::Values("ring_topk", "ring_sign",
                                           "ring_onebit_adam"));

TEST(CompressionStartOptionsTest, NegativeIsRefusedByFlag) {
  CompressionStartOptions options;
  options.start_step = -1;
  EXPECT_THAT(std::string(options.Validate().message()),
              ::testing::HasSubstr("--compression_start_step"));
  EXPECT_TRUE(CompressionStartOptions().Validate().ok());
}

}  // namespace
}  // namespace ringside::testing
