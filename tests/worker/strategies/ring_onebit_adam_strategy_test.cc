// ring_onebit_adam (1-bit Adam):
//  - the rule (OneBitAdamOptimizer): Adam, bit for bit, up to its freeze
//    step; after it m takes the averaged momentum, v stays frozen and p
//    moves by lr·(m/(1−β1^t))/(sqrt(v/(1−β2^freeze)) + eps); it refuses
//    another optimizer and a warm-up of 0, naming the flag;
//  - with N in {1, 2, 4} its ranks stay bit-identical and it trains (its
//    gap recorded); its warm-up steps are ring's with Adam exactly
//    (compression_start_test.cc);
//  - the compression in closed form: each rank signs u = β1·m + (1−β1)·g
//    plus its error with u's RMS as the scale, the bucket is the average of
//    the ranks' s·sign, about 1/32 of ring's bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "models/optimizer.h"
#include "tests/testing/oracle_harness.h"
#include "tests/testing/strategy_steps.h"
#include "worker/strategies/allreduce/compression_start_options.h"
#include "worker/strategies/allreduce/onebit_adam_optimizer.h"

namespace ringside::testing {
namespace {

using ::testing::HasSubstr;

OptimizerConfig Adam() {
  OptimizerConfig adam;
  adam.type = "adam";
  adam.lr = 0.01f;
  return adam;
}

TEST(OneBitAdamOptimizerTest, RefusesAnotherOptimizerAndNoWarmUp) {
  OptimizerConfig sgd;
  sgd.type = "sgd";
  auto refused = OneBitAdamOptimizer::Create(sgd, 4, 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("--optimizer=adam"));
  refused = OneBitAdamOptimizer::Create(Adam(), 4, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("--compression_start_step >= 1"));
}

TEST(OneBitAdamOptimizerTest, AdamUntilTheFreezeThenFrozenVariance) {
  const OptimizerConfig config = Adam();
  auto rule = OneBitAdamOptimizer::Create(config, 3, 2);
  ASSERT_TRUE(rule.ok()) << rule.status();
  auto adam = Optimizer::Create(config, 3);
  ASSERT_TRUE(adam.ok());
  std::vector<float> p = {0.5f, -1.0f, 2.0f};
  std::vector<float> q = p;
  const std::vector<std::vector<float>> grads = {{0.1f, -0.2f, 0.3f},
                                                 {0.4f, 0.1f, -0.5f}};
  for (int step = 1; step <= 2; ++step) {
    (*rule)->Apply(0, absl::MakeSpan(p), grads[step - 1], step);
    (*adam)->Apply(0, absl::MakeSpan(q), grads[step - 1], step);
    EXPECT_EQ(p, q) << "step " << step << " is Adam's";
  }
  const std::vector<float> v = std::vector<float>(
      (*rule)->StateBuffers()[1].begin(), (*rule)->StateBuffers()[1].end());
  // Step 3: the grads are the averaged momentum.
  const std::vector<float> momentum = {0.05f, -0.02f, 0.01f};
  const std::vector<float> before = p;
  (*rule)->Apply(0, absl::MakeSpan(p), momentum, 3);
  const absl::Span<float> m = (*rule)->StateBuffers()[0];
  const absl::Span<float> v_after = (*rule)->StateBuffers()[1];
  const double bc1 = 1 - std::pow(0.9, 3);
  const double bc2 = 1 - std::pow(0.999, 2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m[i], momentum[i]) << i;
    EXPECT_EQ(v_after[i], v[i]) << "the variance is frozen";
    const double want = before[i] - 0.01 * (momentum[i] / bc1) /
                                        (std::sqrt(v[i] / bc2) + 1e-8);
    EXPECT_NEAR(p[i], want, 1e-6) << i;
  }
  EXPECT_EQ((*rule)->MomentumState().data(), m.data());
}

// An element with no gradient in the warm-up (v = 0) is masked: one bit
// cannot say 0, and its signed momentum over eps would throw it away.
TEST(OneBitAdamOptimizerTest, AnElementNeverUpdatedInTheWarmUpStaysPut) {
  auto rule = OneBitAdamOptimizer::Create(Adam(), 2, 1);
  ASSERT_TRUE(rule.ok());
  std::vector<float> p = {1.0f, 1.0f};
  (*rule)->Apply(0, absl::MakeSpan(p), std::vector<float>{0.5f, 0.0f}, 1);
  EXPECT_EQ(p[1], 1.0f);
  const std::vector<float> momentum = {0.05f, 0.05f};
  (*rule)->Apply(0, absl::MakeSpan(p), momentum, 2);
  EXPECT_EQ(p[1], 1.0f);
  EXPECT_EQ((*rule)->StateBuffers()[0][1], 0.0f);
  EXPECT_LT(p[0], 1.0f);
}

OracleSetup AdamSetup(int64_t warm_up, int64_t steps) {
  OracleSetup setup;
  setup.optimizer = Adam();
  setup.steps = steps;
  CompressionStartOptions start;
  start.start_step = warm_up;
  setup.sync.strategy.Set(start);
  return setup;
}

TEST(RingOneBitAdamTest, RefusesSgdAndNoWarmUpAtInit) {
  OracleSetup setup = AdamSetup(2, 2);
  setup.optimizer.type = "sgd";
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_onebit_adam", 2);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(std::string(run.status().message()), HasSubstr("--optimizer=adam"));
  run = RunWorkers(AdamSetup(0, 2), "ring_onebit_adam", 2);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(std::string(run.status().message()),
              HasSubstr("--compression_start_step"));
}

class RingOneBitAdamOracleTest : public ::testing::TestWithParam<int> {};

TEST_P(RingOneBitAdamOracleTest, RanksAgreeItTrainsAndItsGapIsRecorded) {
  const int n = GetParam();
  const OracleSetup setup = AdamSetup(4, 20);
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_onebit_adam", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(RanksAgreeAndItTrains("ring_onebit_adam", setup, n, *run));
  const double error = RelativeL2(run->params[0], reference->params);
  EXPECT_GT(error, 1e-4) << "signed momenta are not the exact update";
  RecordProperty("relative_l2_error", std::to_string(error));
  RecordProperty("eval_loss_gap",
                 std::to_string(run->eval_loss[0] - reference->eval_loss));
}

INSTANTIATE_TEST_SUITE_P(Workers, RingOneBitAdamOracleTest,
                         ::testing::Values(1, 2, 4));

// One plain step, then one compressed, on 2 ranks: a 40-float "w" and a
// 3-float "b" in one bucket, Adam with β1 = 0.9, no weight decay.
TEST(RingOneBitAdamTest, SignsEachRanksMomentumUpdateWithItsRms) {
  constexpr int kN = 2;
  // Step 0 (plain): every rank's g = 1 everywhere: the average is 1 and
  // Adam's m becomes 0.1. Step 1: rank 0's w is +1 but w[5] = −3, its b is
  // {2, −2, 2}; rank 1's w is −1, its b 0.
  auto grads_of = [](int r, int t) {
    std::vector<float> g(43, 1.0f);
    if (t == 0) return g;
    for (int i = 0; i < 40; ++i) g[i] = r == 0 ? 1.0f : -1.0f;
    for (int i = 40; i < 43; ++i) g[i] = 0.0f;
    if (r == 0) {
      g[5] = -3;
      g[40] = 2;
      g[41] = -2;
      g[42] = 2;
    }
    return g;
  };
  CompressionStartOptions start;
  start.start_step = 1;
  StrategyOptionSet options;
  options.Set(start);
  const StrategySteps run = RunStrategySteps(
      "ring_onebit_adam", kN,
      *TensorLayout::FromShapes({{"w", {4, 10}}, {"b", {3}}}), 2, grads_of,
      options, Adam());
  // u = 0.9·0.1 + 0.1·g. Rank 0's w: 0.19 (w[5]: −0.21), RMS
  // sqrt((39·0.19² + 0.21²)/40) ≈ 0.190526; rank 1's w: −0.01, RMS 0.01.
  // b: rank 0's u = (0.29, 0.09 − 0.2 = −0.11, 0.29), RMS
  // sqrt((2·0.29² + 0.11²)/3); rank 1's 0.09 everywhere, RMS 0.09.
  const double s0 = std::sqrt((39 * 0.19 * 0.19 + 0.21 * 0.21) / 40);
  const double b0 = std::sqrt((2 * 0.29 * 0.29 + 0.11 * 0.11) / 3);
  for (int r = 0; r < kN; ++r) {
    const std::vector<float>& m = run.grads[r][1];
    EXPECT_NEAR(m[0], (s0 - 0.01) / 2, 1e-6) << "rank " << r;
    EXPECT_NEAR(m[5], (-s0 - 0.01) / 2, 1e-6);
    EXPECT_NEAR(m[40], (b0 + 0.09) / 2, 1e-6);
    EXPECT_NEAR(m[41], (-b0 + 0.09) / 2, 1e-6);
    EXPECT_EQ(m, run.grads[0][1]) << "ranks agree";
    // Step 0: a plain all-reduce, 2·1/2 · 43 · 4 = 172 bytes; step 1:
    // the words (w 1 + 2, b 1 + 1) all-gathered over 2 ranks, 20 bytes.
    EXPECT_EQ(run.stats[r][0].bytes_sent, 172);
    EXPECT_EQ(run.stats[r][1].bytes_sent, 20);
  }
}

}  // namespace
}  // namespace ringside::testing
