// ring_topk (top-k sparsification with error feedback):
//  - the oracle at ratio 1 (every element sent), N in {1, 2, 4}, SGD +
//    momentum and Adam: equal to one worker on the global batch up to the
//    sum's order, bit-identical ranks; at 1% it is lossy but trains;
//  - the selection and error feedback in closed form: each tensor sends
//    its k largest magnitudes, the bucket is the ranks' sparse sum / N, the
//    elements not sent come back next step through the error memory, the
//    traffic is the all-gather's share of ring's;
//  - a bad ratio refused, naming the flag.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <tuple>
#include <vector>

#include "tests/testing/oracle_harness.h"
#include "tests/testing/strategy_steps.h"
#include "worker/strategies/allreduce/topk_options.h"

namespace ringside::testing {
namespace {

class RingTopkOracleTest
    : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(RingTopkOracleTest, EveryElementSentMatchesTheSingleWorker) {
  const auto [n, optimizer] = GetParam();
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find("ring_topk");
  ASSERT_TRUE(info.ok()) << info.status();
  OracleSetup setup;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  SetUpForStrategy(*info, setup);
  ASSERT_EQ(setup.sync.strategy.Get<TopkOptions>().ratio, 1.0);
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_topk", n);
  ASSERT_TRUE(run.ok()) << run.status();
  // Every element sent: the exact strategies' float32 rounding.
  EXPECT_TRUE(MatchesReference(*run, *reference, 1e-5));
  RecordProperty("relative_l2_error",
                 std::to_string(RelativeL2(run->params[0], reference->params)));
}

INSTANTIATE_TEST_SUITE_P(WorkersAndOptimizers, RingTopkOracleTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values("sgd", "adam")));

TEST(RingTopkOracleTest, OnePercentIsLossyButTrains) {
  constexpr int kN = 2;
  OracleSetup setup;
  setup.steps = 30;
  TopkOptions sparse;
  sparse.ratio = 0.01;
  setup.sync.strategy.Set(sparse);
  absl::StatusOr<TrainResult> reference = RunReference(setup, kN);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_topk", kN);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->params[0], run->params[1]) << "ranks agree";
  const double error = RelativeL2(run->params[0], reference->params);
  EXPECT_GT(error, 1e-3) << "1% should differ from the exact update";
  OracleSetup fresh = setup;
  fresh.steps = 1;
  absl::StatusOr<TrainResult> one_step = RunReference(fresh, kN);
  ASSERT_TRUE(one_step.ok());
  EXPECT_LT(run->eval_loss[0], one_step->eval_loss) << "it trains";
  RecordProperty("relative_l2_error_1pct", std::to_string(error));
}

// `steps` FinishSteps of ring_topk at `ratio` on N ranks as threads, a
// 10-float "w" and a 4-float "b" in one bucket.
StrategySteps RunSteps(
    int n, int steps, double ratio,
    const std::function<std::vector<float>(int, int)>& grads_of) {
  StrategyOptionSet options;
  TopkOptions topk;
  topk.ratio = ratio;
  options.Set(topk);
  return RunStrategySteps(
      "ring_topk", n, *TensorLayout::FromShapes({{"w", {2, 5}}, {"b", {4}}}),
      steps, grads_of, options);
}

TEST(RingTopkStrategyTest, SendsEachTensorsLargestAndFeedsTheRestBack) {
  constexpr int kN = 2;
  // ratio 0.2: w (10 elements) sends 2, b (4) sends 1.
  // Step 0, rank 0: w = 0.1·i except w[3] = 5 and w[7] = -6; b = {0, 0,
  // 2, 0}. Rank 1: w = 0 except w[3] = 1 and w[9] = 4; b = {0, 3, 0, 0}.
  auto grads_of = [](int r, int t) {
    std::vector<float> g(14, 0.0f);
    if (t == 1) return g;  // step 1: nothing new, the errors alone
    if (r == 0) {
      for (int i = 0; i < 10; ++i) g[i] = 0.1f * i;
      g[3] = 5;
      g[7] = -6;
      g[12] = 2;
    } else {
      g[3] = 1;
      g[9] = 4;
      g[11] = 3;
    }
    return g;
  };
  const StrategySteps run = RunSteps(kN, 2, 0.2, grads_of);
  for (int r = 0; r < kN; ++r) {
    const std::vector<float>& s0 = run.grads[r][0];
    // Rank 0 sends w[3] = 5, w[7] = -6, b[2] = 2; rank 1 w[3] = 1, w[9] =
    // 4, b[1] = 3: the sums halved.
    std::vector<float> want(14, 0.0f);
    want[3] = 3;
    want[7] = -3;
    want[9] = 2;
    want[12] = 1;
    want[11] = 1.5f;
    EXPECT_EQ(s0, want) << "rank " << r;
    // Step 1: rank 0's error holds w = 0.1·i for i ∉ {3, 7}: it sends
    // w[9] = 0.9 and w[8] = 0.8; rank 1's error is 0 (it sent every
    // non-zero), so it sends two zeros of w and one of b.
    const std::vector<float>& s1 = run.grads[r][1];
    EXPECT_FLOAT_EQ(s1[9], 0.45f);
    EXPECT_FLOAT_EQ(s1[8], 0.4f);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(s1[i], 0.0f) << i;
    EXPECT_EQ(run.grads[r][1], run.grads[0][1]) << "ranks agree";
    // 3 pairs (6 floats) all-gathered over 2 ranks: 24 bytes each way, of
    // ring's 56 (2·1/2 of 14 floats).
    EXPECT_EQ(run.stats[r][0].bytes_sent, 24);
  }
}

TEST(RingTopkStrategyTest, RatioOneSendsEverything) {
  constexpr int kN = 3;
  auto grads_of = [](int r, int) {
    std::vector<float> g(14);
    for (int i = 0; i < 14; ++i) g[i] = static_cast<float>((i + 1) * (r + 1));
    return g;
  };
  const StrategySteps run = RunSteps(kN, 1, 1.0, grads_of);
  for (int r = 0; r < kN; ++r) {
    for (int i = 0; i < 14; ++i) {
      EXPECT_FLOAT_EQ(run.grads[r][0][i], 2.0f * (i + 1)) << i;
    }
  }
}

TEST(RingTopkStrategyTest, BadRatioIsRefusedByFlag) {
  for (double ratio : {0.0, -0.5, 1.5}) {
    TopkOptions o;
    o.ratio = ratio;
    EXPECT_NE(o.Validate().message().find("--topk_ratio"), std::string::npos)
        << ratio;
  }
  TopkOptions ok;
  EXPECT_TRUE(ok.Validate().ok());
}

}  // namespace
}  // namespace ringside::testing
