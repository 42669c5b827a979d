// ring_fp16 (fp16-compressed ring all-reduce):
//  - the oracle within its declared tolerance (1e-2), N in {1, 2, 4}, both
//    Gloo algorithms, SGD + momentum and Adam, with the compression visible
//    (not within float32 rounding of the reference) and bit-identical ranks;
//  - the fp16 semantics in closed form: halves are summed in fp16 (a sum
//    that fp16 cannot hold is rounded), the traffic is half of ring's;
//  - GlooHalfAllReduce on its own, and the float <-> fp16 conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "collectives/gloo_half_allreduce.h"
#include "collectives/in_memory_store.h"
#include "gloo/types.h"
#include "tests/testing/oracle_harness.h"
#include "tests/testing/rank_threads.h"
#include "tests/testing/strategy_steps.h"

namespace ringside::testing {
namespace {

class RingFp16OracleTest
    : public ::testing::TestWithParam<
          std::tuple<int, std::string, std::string>> {};

TEST_P(RingFp16OracleTest, MatchesSingleWorkerWithinDeclaredTolerance) {
  const auto [n, algorithm, optimizer] = GetParam();
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find("ring_fp16");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->oracle_tolerance, 1e-2);
  OracleSetup setup;
  setup.sync.allreduce_algorithm = algorithm;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_fp16", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference, info->oracle_tolerance));
  const double error = RelativeL2(run->params[0], reference->params);
  // The gradients really went through fp16 (N = 1 rounds them too).
  EXPECT_GT(error, 1e-7) << "no fp16 rounding visible";
  RecordProperty("relative_l2_error", std::to_string(error));
}

INSTANTIATE_TEST_SUITE_P(
    WorkersAlgorithmsOptimizers, RingFp16OracleTest,
    ::testing::Combine(::testing::Values(1, 2, 4),
                       ::testing::Values("ring", "halving_doubling"),
                       ::testing::Values("sgd", "adam")));

// One FinishStep of `strategy` on N ranks as threads (a 3x4 "w" and a
// 4-float "b") with gradients grads_of(rank): each rank's averaged
// gradients and stats.
StrategySteps RunOneStep(
    const std::string& strategy, int n,
    const std::function<std::vector<float>(int)>& grads_of) {
  return RunStrategySteps(
      strategy, n, *TensorLayout::FromShapes({{"w", {3, 4}}, {"b", {4}}}), 1,
      [&](int r, int) { return grads_of(r); });
}

TEST(RingFp16StrategyTest, SumsInFp16AndMovesHalfOfRingsBytes) {
  constexpr int kN = 2;
  // Element 0: 1 + 2^-11 is a tie in fp16 and rounds to even (1), where
  // float32 keeps 1.00048828125. Element 1: 0.1 is not an fp16 value.
  // The others are small integers, exact in fp16.
  auto grads_of = [](int r) {
    std::vector<float> g(16);
    for (int i = 0; i < 16; ++i) g[i] = static_cast<float>(i % 5 + r);
    g[0] = r == 0 ? 1.0f : std::ldexp(1.0f, -11);
    g[1] = 0.1f;
    return g;
  };
  StrategySteps fp16 = RunOneStep("ring_fp16", kN, grads_of);
  StrategySteps ring = RunOneStep("ring", kN, grads_of);
  ASSERT_EQ(fp16.grads.size(), static_cast<size_t>(kN));
  for (int r = 0; r < kN; ++r) {
    ASSERT_EQ(fp16.grads[r][0].size(), 16u);
    EXPECT_EQ(fp16.grads[r][0][0], 0.5f) << "fp16 sum 1 + 2^-11 = 1, / 2";
    EXPECT_NE(ring.grads[r][0][0], 0.5f) << "float32 keeps the 2^-11";
    uint16_t h;
    float tenth;
    FloatToHalf({0.1f}, absl::MakeSpan(&h, 1));
    HalfToFloat({h}, absl::MakeSpan(&tenth, 1));
    EXPECT_EQ(fp16.grads[r][0][1], tenth) << "(h(0.1) + h(0.1)) / 2 = h(0.1)";
    for (int i = 2; i < 16; ++i) {
      EXPECT_EQ(fp16.grads[r][0][i], ring.grads[r][0][i]) << "element " << i;
    }
    EXPECT_EQ(fp16.grads[r][0], fp16.grads[0][0]) << "ranks agree";
    // 16 floats: ring moves 2(N-1)/N * 64 bytes each way, fp16 half that.
    EXPECT_EQ(ring.stats[r][0].bytes_sent, 64);
    EXPECT_EQ(fp16.stats[r][0].bytes_sent, 32);
    EXPECT_EQ(fp16.stats[r][0].bytes_received, 32);
    EXPECT_EQ(2 * fp16.stats[r][0].bytes_sent, ring.stats[r][0].bytes_sent);
  }
}

TEST(RingFp16StrategyTest, SeveralWorkersNeedAStore) {
  absl::StatusOr<std::unique_ptr<SyncStrategy>> s =
      StrategyRegistry::Create("ring_fp16");
  ASSERT_TRUE(s.ok());
  std::vector<float> params(10), grads(10);
  SyncContext context;
  context.rank = 0;
  context.world_size = 2;
  context.layout = *TensorLayout::FromShapes({{"w", {10}}});
  context.params = absl::MakeSpan(params);
  context.grads = absl::MakeSpan(grads);
  absl::Status st = (*s)->Init(context);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
}

TEST(HalfConversionTest, RoundsToNearestEvenAndOverflowsToInfinity) {
  const std::vector<float> in = {0.0f, 1.0f, -2.5f, 65504.0f,
                                 1.0f + std::ldexp(1.0f, -11),
                                 1.0f + 3 * std::ldexp(1.0f, -11), 1e5f,
                                 std::ldexp(1.0f, -24)};
  std::vector<uint16_t> h(in.size());
  std::vector<float> out(in.size());
  FloatToHalf(in, absl::MakeSpan(h));
  HalfToFloat(h, absl::MakeSpan(out));
  EXPECT_EQ(h[1], 0x3c00);  // 1.0
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], -2.5f);
  EXPECT_EQ(out[3], 65504.0f);                            // fp16 max
  EXPECT_EQ(out[4], 1.0f);                                // tie -> even
  EXPECT_EQ(out[5], 1.0f + 2 * std::ldexp(1.0f, -10));    // tie -> even
  EXPECT_EQ(out[6], std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[7], std::ldexp(1.0f, -24));               // smallest subnormal
}

// The vectorized (F16C) conversions give Gloo's scalar bits: every half,
// and floats around every half (exact, midpoints, one ulp off) plus random
// ones, in lengths that exercise the 8-wide loop and its tail.
TEST(HalfConversionTest, SameBitsAsGlooScalarConversions) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> widened(all.size());
  HalfToFloat(all, absl::MakeSpan(widened));
  std::vector<float> floats;
  for (int i = 0; i < 65536; ++i) {
    gloo::float16 h;
    h.x = all[i];
    const float want = gloo::cpu_half2float(h);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(widened[i])) << i;
      continue;
    }
    uint32_t got_bits, want_bits;
    std::memcpy(&got_bits, &widened[i], 4);
    std::memcpy(&want_bits, &want, 4);
    ASSERT_EQ(got_bits, want_bits) << "half 0x" << std::hex << i;
    floats.push_back(want);
    floats.push_back(std::nextafter(want, 1e9f));
    floats.push_back(std::nextafter(want, -1e9f));
    floats.push_back(want * (1.0f + std::ldexp(1.0f, -11)));  // midpoints
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 20);
  for (int i = 0; i < 100003; ++i) {
    floats.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  }
  std::vector<uint16_t> narrowed(floats.size());
  FloatToHalf(floats, absl::MakeSpan(narrowed));
  for (size_t i = 0; i < floats.size(); ++i) {
    ASSERT_EQ(narrowed[i], gloo::cpu_float2half_rn(floats[i]).x)
        << "float " << floats[i];
  }
}

TEST(GlooHalfAllReduceTest, SumsOverThreeRanksInPlace) {
  constexpr int kN = 3;
  constexpr int kElements = 1001;  // not a multiple of the ring's chunks
  InMemoryStore store;
  std::vector<std::vector<uint16_t>> data(kN);
  ExpectAllOk(RunRanks(kN, [&](int r) -> absl::Status {
    GlooCollectiveOptions options;
    options.store_prefix = "half_test";
    options.connect_timeout = absl::Seconds(10);
    absl::StatusOr<std::unique_ptr<GlooHalfAllReduce>> group =
        GlooHalfAllReduce::Create(store, r, kN, options);
    if (!group.ok()) return group.status();
    std::vector<float> values(kElements);
    for (int i = 0; i < kElements; ++i) values[i] = (i % 13) * (r + 1);
    data[r].resize(kElements);
    FloatToHalf(values, absl::MakeSpan(data[r]));
    return (*group)->AllReduceSum(absl::MakeSpan(data[r]), absl::Seconds(10));
  }));
  for (int r = 0; r < kN; ++r) {
    std::vector<float> sum(kElements);
    HalfToFloat(data[r], absl::MakeSpan(sum));
    for (int i = 0; i < kElements; ++i) {
      ASSERT_EQ(sum[i], (i % 13) * 6.0f) << "rank " << r << " element " << i;
    }
  }
}

TEST(GlooHalfAllReduceTest, AbsentRankIsNamed) {
  InMemoryStore store;
  GlooCollectiveOptions options;
  options.store_prefix = "half_absent";
  options.connect_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<GlooHalfAllReduce>> group =
      GlooHalfAllReduce::Create(store, 0, 2, options);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(group.status().message().find("rank(s) [1]"), std::string::npos)
      << group.status();
}

}  // namespace
}  // namespace ringside::testing
