#include "models/optimizer.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

std::unique_ptr<Optimizer> MustCreate(const OptimizerConfig& config,
                                      int64_t n) {
  auto opt = Optimizer::Create(config, n);
  EXPECT_TRUE(opt.ok()) << opt.status();
  return opt.ok() ? *std::move(opt) : nullptr;
}

TEST(OptimizerTest, SgdMomentumMatchesHandComputedSteps) {
  OptimizerConfig config;
  config.type = "sgd";
  config.lr = 0.1f;
  config.momentum = 0.9f;
  config.weight_decay = 0.01f;
  auto opt = MustCreate(config, 2);
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->state_bytes(), 8);
  std::vector<float> p = {1.0f, -2.0f};
  const std::vector<float> g = {0.5f, 0.25f};

  // Step 1: g' = g + 0.01 p = {0.51, 0.23}; v = g'; p -= 0.1 v.
  opt->Apply(0, absl::MakeSpan(p), g, 1);
  EXPECT_NEAR(p[0], 0.949f, 1e-6);
  EXPECT_NEAR(p[1], -2.023f, 1e-6);
  // Step 2: g' = {0.5 + 0.00949, 0.25 - 0.02023} = {0.50949, 0.22977};
  // v = 0.9 {0.51, 0.23} + g' = {0.96849, 0.43677}; p -= 0.1 v.
  opt->Apply(0, absl::MakeSpan(p), g, 2);
  EXPECT_NEAR(p[0], 0.852151f, 1e-6);
  EXPECT_NEAR(p[1], -2.066677f, 1e-6);
}

TEST(OptimizerTest, SgdWithoutMomentumIsPlainSgd) {
  OptimizerConfig config;
  config.lr = 0.5f;
  config.momentum = 0.0f;
  auto opt = MustCreate(config, 3);
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->state_bytes(), 0);
  std::vector<float> p = {1.0f, 2.0f, 3.0f};
  const std::vector<float> g = {1.0f, -1.0f, 0.5f};
  opt->Apply(0, absl::MakeSpan(p), g, 1);
  opt->Apply(0, absl::MakeSpan(p), g, 2);
  // p - 2 * 0.5 g, no velocity carried over.
  EXPECT_FLOAT_EQ(p[0], 0.0f);
  EXPECT_FLOAT_EQ(p[1], 3.0f);
  EXPECT_FLOAT_EQ(p[2], 2.5f);
}

TEST(OptimizerTest, AdamMatchesHandComputedSteps) {
  OptimizerConfig config;
  config.type = "adam";
  config.lr = 0.01f;
  config.beta1 = 0.9f;
  config.beta2 = 0.999f;
  config.eps = 1e-8f;
  config.weight_decay = 0.1f;
  auto opt = MustCreate(config, 2);
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->state_bytes(), 16);
  std::vector<float> p = {1.0f, -0.5f};

  // Step 1, element 0: g' = 0.5 + 0.1 * 1 = 0.6; m = 0.06; v = 0.00036;
  // mhat = 0.6, vhat = 0.36; p = 1 - 0.01 * 0.6 / 0.6 = 0.99.
  // Element 1: g' = 0.2 - 0.05 = 0.15; the first step moves by lr: -0.51.
  opt->Apply(0, absl::MakeSpan(p), std::vector<float>{0.5f, 0.2f}, 1);
  EXPECT_NEAR(p[0], 0.99f, 1e-6);
  EXPECT_NEAR(p[1], -0.51f, 1e-6);
  // Step 2, element 0: g' = -0.25 + 0.099 = -0.151; m = 0.054 - 0.0151 =
  // 0.0389; v = 0.00035964 + 0.000022801 = 0.000382441;
  // mhat = 0.0389 / 0.19 = 0.2047368; vhat = 0.000382441 / 0.001999 =
  // 0.1913162; p = 0.99 - 0.01 * 0.2047368 / 0.4373971 = 0.9853192.
  opt->Apply(0, absl::MakeSpan(p), std::vector<float>{-0.25f, 0.2f}, 2);
  EXPECT_NEAR(p[0], 0.985319199f, 1e-6);
  EXPECT_NEAR(p[1], -0.519998199f, 1e-6);
  // Step 3 (same rule, bias corrections 1 - 0.9^3 and 1 - 0.999^3).
  opt->Apply(0, absl::MakeSpan(p), std::vector<float>{0.1f, -0.3f}, 3);
  EXPECT_NEAR(p[0], 0.979920737f, 1e-6);
  EXPECT_NEAR(p[1], -0.518498163f, 1e-6);
}

class ChunkedTest : public testing::TestWithParam<std::string> {};

TEST_P(ChunkedTest, ChunkByChunkEqualsWhole) {
  OptimizerConfig config;
  config.type = GetParam();
  config.lr = 0.01f;
  config.weight_decay = 0.001f;
  constexpr int64_t kN = 1000;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> init(kN);
  for (float& x : init) x = normal(rng);
  std::vector<std::vector<float>> grads(3, std::vector<float>(kN));
  for (auto& g : grads) {
    for (float& x : g) x = normal(rng);
  }

  auto whole = MustCreate(config, kN);
  auto chunked = MustCreate(config, kN);
  ASSERT_TRUE(whole && chunked);
  std::vector<float> a = init, b = init;
  const std::vector<int64_t> cuts = {0, 1, 100, 537, 999, kN};
  for (int step = 1; step <= 3; ++step) {
    const std::vector<float>& g = grads[step - 1];
    whole->Apply(0, absl::MakeSpan(a), g, step);
    // Chunks in reverse order, as a server might receive them.
    for (size_t c = cuts.size() - 1; c > 0; --c) {
      const int64_t lo = cuts[c - 1], len = cuts[c] - cuts[c - 1];
      chunked->Apply(lo, absl::MakeSpan(b).subspan(lo, len),
                     absl::MakeConstSpan(g).subspan(lo, len), step);
    }
  }
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(a[i], b[i]) << "element " << i;
    ASSERT_NE(a[i], init[i]) << "element " << i << " was not updated";
  }
}

INSTANTIATE_TEST_SUITE_P(Types, ChunkedTest, testing::Values("sgd", "adam"));

// The config's count of state floats per parameter (the memory formulas'
// s) is what each optimizer really allocates.
TEST(OptimizerTest, StateFloatsPerParameterIsWhatTheOptimizerHolds) {
  constexpr int64_t kN = 1000;
  OptimizerConfig momentum;  // sgd, momentum 0.9
  OptimizerConfig plain;
  plain.momentum = 0;
  OptimizerConfig adam;
  adam.type = "adam";
  EXPECT_EQ(momentum.StateFloatsPerParameter(), 1);
  EXPECT_EQ(plain.StateFloatsPerParameter(), 0);
  EXPECT_EQ(adam.StateFloatsPerParameter(), 2);
  for (const OptimizerConfig& c : {momentum, plain, adam}) {
    EXPECT_EQ(MustCreate(c, kN)->state_bytes(),
              c.StateFloatsPerParameter() * kN * 4)
        << c.DebugString();
  }
}

TEST(OptimizerTest, BadConfigIsInvalidArgument) {
  auto expect_bad = [](OptimizerConfig c, const std::string& field) {
    absl::Status s = c.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.DebugString();
    EXPECT_NE(s.message().find(field), std::string::npos) << s;
    EXPECT_EQ(Optimizer::Create(c, 4).status().code(),
              absl::StatusCode::kInvalidArgument);
  };
  OptimizerConfig sgd;
  OptimizerConfig adam;
  adam.type = "adam";
  ASSERT_TRUE(sgd.Validate().ok());
  ASSERT_TRUE(adam.Validate().ok());

  OptimizerConfig c = sgd;
  c.type = "rmsprop";
  expect_bad(c, "rmsprop");
  c = sgd, c.lr = 0.0f;
  expect_bad(c, "lr");
  c = sgd, c.lr = std::numeric_limits<float>::quiet_NaN();
  expect_bad(c, "lr");
  c = sgd, c.momentum = 1.0f;
  expect_bad(c, "momentum");
  c = sgd, c.momentum = -0.1f;
  expect_bad(c, "momentum");
  c = sgd, c.weight_decay = -1.0f;
  expect_bad(c, "weight_decay");
  c = adam, c.beta1 = 1.0f;
  expect_bad(c, "beta1");
  c = adam, c.beta2 = -0.5f;
  expect_bad(c, "beta2");
  c = adam, c.eps = 0.0f;
  expect_bad(c, "eps");
  // A tests/fuzz/checkpoint_fuzzer case: a NaN in a field the type ignores
  // would make a config unequal to itself, so a checkpoint (or a second
  // registration) carrying it could never match.
  c = sgd, c.beta2 = std::numeric_limits<float>::quiet_NaN();
  expect_bad(c, "beta2");
  c = adam, c.momentum = std::numeric_limits<float>::infinity();
  expect_bad(c, "momentum");
  EXPECT_EQ(Optimizer::Create(sgd, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Linear warm-up over W updates: update t (from 1) uses lr * t / W while
// t < W, then lr; the same rate in SGD and Adam.
TEST(OptimizerTest, WarmupScalesTheRateOfTheFirstUpdates) {
  OptimizerConfig config;
  config.lr = 0.4f;
  config.momentum = 0.0f;
  config.lr_warmup_steps = 4;
  ASSERT_TRUE(config.Validate().ok());
  EXPECT_FLOAT_EQ(config.LrAt(1), 0.1f);
  EXPECT_FLOAT_EQ(config.LrAt(2), 0.2f);
  EXPECT_FLOAT_EQ(config.LrAt(3), 0.3f);
  EXPECT_FLOAT_EQ(config.LrAt(4), 0.4f);
  EXPECT_FLOAT_EQ(config.LrAt(100), 0.4f);
  auto opt = MustCreate(config, 1);
  ASSERT_NE(opt, nullptr);
  std::vector<float> p = {1.0f};
  const std::vector<float> g = {1.0f};
  float want = 1.0f;
  for (int64_t t = 1; t <= 6; ++t) {
    opt->Apply(0, absl::MakeSpan(p), g, t);
    want -= config.LrAt(t);
    EXPECT_FLOAT_EQ(p[0], want) << "update " << t;
  }
  // Adam's first update moves each parameter by about its rate.
  OptimizerConfig adam = config;
  adam.type = "adam";
  auto a = MustCreate(adam, 1);
  ASSERT_NE(a, nullptr);
  std::vector<float> q = {1.0f};
  a->Apply(0, absl::MakeSpan(q), g, 1);
  EXPECT_NEAR(q[0], 1.0f - 0.1f, 1e-6);
  // Without warm-up every update has the full rate.
  OptimizerConfig plain = config;
  plain.lr_warmup_steps = 0;
  EXPECT_FLOAT_EQ(plain.LrAt(1), 0.4f);
  plain.lr_warmup_steps = -1;
  EXPECT_NE(plain.Validate().message().find("lr_warmup_steps"),
            std::string::npos);
}

TEST(OptimizerTest, ConfigProtoRoundTrip) {
  OptimizerConfig c;
  c.type = "adam";
  c.lr = 0.003f;
  c.momentum = 0.5f;
  c.beta1 = 0.8f;
  c.beta2 = 0.99f;
  c.eps = 1e-6f;
  c.weight_decay = 0.02f;
  c.lr_warmup_steps = 7;
  EXPECT_EQ(OptimizerConfig::FromProto(c.ToProto()), c) << c.DebugString();
  OptimizerConfig d = c;
  d.beta2 = 0.98f;
  EXPECT_FALSE(d == c);
  d = c;
  d.lr_warmup_steps = 8;  // a resume with another warm-up is refused
  EXPECT_FALSE(d == c);
}

}  // namespace
}  // namespace ringside
