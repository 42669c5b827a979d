// ring_bf16 (bf16-compressed ring all-reduce):
//  - the oracle within its declared tolerance (1e-2), N in {1, 2, 4}, both
//    Gloo algorithms, SGD + momentum and Adam, with the compression visible
//    (not within float32 rounding of the reference) and bit-identical ranks;
//  - the bf16 semantics in closed form: elements are summed in bf16 (a sum
//    that bf16 cannot hold is rounded to nearest even), a gradient past
//    fp16's range keeps its magnitude, the traffic is half of ring's;
//  - the float <-> bf16 conversion against its definition, and
//    GlooHalfAllReduce summing bf16 on its own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "collectives/gloo_half_allreduce.h"
#include "collectives/in_memory_store.h"
#include "tests/testing/oracle_harness.h"
#include "tests/testing/rank_threads.h"
#include "tests/testing/strategy_steps.h"

namespace ringside::testing {
namespace {

class RingBf16OracleTest
    : public ::testing::TestWithParam<
          std::tuple<int, std::string, std::string>> {};

TEST_P(RingBf16OracleTest, MatchesSingleWorkerWithinDeclaredTolerance) {
  const auto [n, algorithm, optimizer] = GetParam();
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find("ring_bf16");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->oracle_tolerance, 1e-2);
  EXPECT_EQ(info->updates, "lossy (bf16 gradients)");
  OracleSetup setup;
  setup.sync.allreduce_algorithm = algorithm;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring_bf16", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference, info->oracle_tolerance));
  const double error = RelativeL2(run->params[0], reference->params);
  // The gradients really went through bf16 (N = 1 rounds them too).
  EXPECT_GT(error, 1e-7) << "no bf16 rounding visible";
  RecordProperty("relative_l2_error", std::to_string(error));
}

INSTANTIATE_TEST_SUITE_P(
    WorkersAlgorithmsOptimizers, RingBf16OracleTest,
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

TEST(RingBf16StrategyTest, SumsInBf16KeepsFloatRangeAndMovesHalfOfRingsBytes) {
  constexpr int kN = 2;
  // Element 0: 1 + 2^-8 is a tie in bf16 and rounds to even (1), where
  // float32 keeps 1.00390625. Element 1: 0.1 is not a bf16 value. Element
  // 2: 1e5 is past fp16's largest (65504, where ring_fp16 gives inf) and
  // 2e5 its sum; both round to bf16's 8 bits. The others are small
  // integers, exact in bf16.
  auto grads_of = [](int r) {
    std::vector<float> g(16);
    for (int i = 0; i < 16; ++i) g[i] = static_cast<float>(i % 5 + r);
    g[0] = r == 0 ? 1.0f : std::ldexp(1.0f, -8);
    g[1] = 0.1f;
    g[2] = 1e5f;
    return g;
  };
  StrategySteps bf16 = RunOneStep("ring_bf16", kN, grads_of);
  StrategySteps ring = RunOneStep("ring", kN, grads_of);
  StrategySteps fp16 = RunOneStep("ring_fp16", kN, grads_of);
  auto round_trip = [](float v) {
    uint16_t h;
    float back;
    FloatToBf16({v}, absl::MakeSpan(&h, 1));
    Bf16ToFloat({h}, absl::MakeSpan(&back, 1));
    return back;
  };
  ASSERT_EQ(bf16.grads.size(), static_cast<size_t>(kN));
  for (int r = 0; r < kN; ++r) {
    ASSERT_EQ(bf16.grads[r][0].size(), 16u);
    EXPECT_EQ(bf16.grads[r][0][0], 0.5f) << "bf16 sum 1 + 2^-8 = 1, / 2";
    EXPECT_NE(ring.grads[r][0][0], 0.5f) << "float32 keeps the 2^-8";
    EXPECT_EQ(bf16.grads[r][0][1], round_trip(0.1f))
        << "(b(0.1) + b(0.1)) / 2 = b(0.1)";
    EXPECT_EQ(bf16.grads[r][0][2], round_trip(2 * round_trip(1e5f)) / 2);
    EXPECT_NEAR(bf16.grads[r][0][2], 1e5f, 1e5f / 128) << "no overflow";
    EXPECT_TRUE(std::isinf(fp16.grads[r][0][2])) << "fp16 overflows there";
    for (int i = 3; i < 16; ++i) {
      EXPECT_EQ(bf16.grads[r][0][i], ring.grads[r][0][i]) << "element " << i;
    }
    EXPECT_EQ(bf16.grads[r][0], bf16.grads[0][0]) << "ranks agree";
    // 16 floats: ring moves 2(N-1)/N * 64 bytes each way, bf16 half that.
    EXPECT_EQ(ring.stats[r][0].bytes_sent, 64);
    EXPECT_EQ(bf16.stats[r][0].bytes_sent, 32);
    EXPECT_EQ(bf16.stats[r][0].bytes_received, 32);
  }
}

// bf16 is float32's top half, rounded to nearest even: checked against
// that definition in exact arithmetic (the two neighbouring bf16 values
// and the distance to each) for every bf16 pattern's neighbourhood and
// random floats.
uint16_t NearestEvenBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t down = static_cast<uint16_t>(bits >> 16);
  const uint32_t low = bits & 0xffffu;
  if (low < 0x8000u) return down;
  if (low > 0x8000u) return static_cast<uint16_t>(down + 1);
  return (down & 1u) ? static_cast<uint16_t>(down + 1) : down;
}

TEST(Bf16ConversionTest, RoundsToNearestEvenWidensExactlyKeepsSpecials) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> widened(all.size());
  Bf16ToFloat(all, absl::MakeSpan(widened));
  std::vector<float> floats;
  for (int i = 0; i < 65536; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &widened[i], 4);
    ASSERT_EQ(bits, static_cast<uint32_t>(i) << 16) << "exact widening";
    if (std::isnan(widened[i]) || std::isinf(widened[i])) continue;
    floats.push_back(widened[i]);
    floats.push_back(std::nextafter(widened[i], 1e30f));
    floats.push_back(std::nextafter(widened[i], -1e30f));
    uint32_t mid = bits | 0x8000u;  // the midpoint above, a tie
    float m;
    std::memcpy(&m, &mid, 4);
    if (!std::isinf(m) && !std::isnan(m)) floats.push_back(m);
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 100003; ++i) {
    uint32_t bits = any(rng);
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isnan(f)) floats.push_back(f);
  }
  std::vector<uint16_t> narrowed(floats.size());
  FloatToBf16(floats, absl::MakeSpan(narrowed));
  for (size_t i = 0; i < floats.size(); ++i) {
    ASSERT_EQ(narrowed[i], NearestEvenBf16(floats[i])) << floats[i];
  }
  const std::vector<float> specials = {
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::max(), 1.0f + std::ldexp(1.0f, -8),
      1.0f + 3 * std::ldexp(1.0f, -8)};
  std::vector<uint16_t> h(specials.size());
  std::vector<float> back(specials.size());
  FloatToBf16(specials, absl::MakeSpan(h));
  Bf16ToFloat(h, absl::MakeSpan(back));
  EXPECT_EQ(back[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(back[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(back[2]));
  EXPECT_EQ(back[3], std::numeric_limits<float>::infinity())
      << "float32's largest rounds past bf16's largest";
  EXPECT_EQ(back[4], 1.0f) << "tie -> even";
  EXPECT_EQ(back[5], 1.0f + 4 * std::ldexp(1.0f, -8)) << "tie -> even";
}

TEST(GlooHalfAllReduceTest, SumsBf16OverThreeRanksInPlace) {
  constexpr int kN = 3;
  constexpr int kElements = 1001;  // not a multiple of the ring's chunks
  InMemoryStore store;
  std::vector<std::vector<uint16_t>> data(kN);
  ExpectAllOk(RunRanks(kN, [&](int r) -> absl::Status {
    GlooCollectiveOptions options;
    options.store_prefix = "bf16_test";
    options.connect_timeout = absl::Seconds(10);
    absl::StatusOr<std::unique_ptr<GlooHalfAllReduce>> group =
        GlooHalfAllReduce::Create(store, r, kN, options, HalfFormat::kBf16);
    if (!group.ok()) return group.status();
    std::vector<float> values(kElements);
    // Multiples of 2^10 up to 12·2^10·3: exact in bf16's 8 bits only as
    // bf16, not as fp16 (past 65504 for the largest sums).
    for (int i = 0; i < kElements; ++i) {
      values[i] = std::ldexp(static_cast<float>((i % 13) * (r + 1)), 10);
    }
    data[r].resize(kElements);
    FloatToBf16(values, absl::MakeSpan(data[r]));
    return (*group)->AllReduceSum(absl::MakeSpan(data[r]), absl::Seconds(10));
  }));
  for (int r = 0; r < kN; ++r) {
    std::vector<float> sum(kElements);
    Bf16ToFloat(data[r], absl::MakeSpan(sum));
    for (int i = 0; i < kElements; ++i) {
      ASSERT_EQ(sum[i], std::ldexp((i % 13) * 6.0f, 10))
          << "rank " << r << " element " << i;
    }
  }
}

}  // namespace
}  // namespace ringside::testing
