#include "models/synthetic_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/stopwatch.h"
#include "gtest/gtest.h"
#include "models/optimizer.h"
#include "models/profile_file.h"
#include "models/synthetic_classification.h"
#include "tests/testing/param_use_log.h"

namespace ringside {
namespace {

GradientProfile Profile(
    std::vector<std::pair<std::string, std::vector<int64_t>>> tensors) {
  GradientProfile p;
  p.name = "tiny";
  p.description = "test profile";
  p.tensors = std::move(tensors);
  p.published_parameters = p.num_parameters();
  return p;
}

GradientProfile TinyProfile() {
  return Profile({{"a.weight", {3, 4}},
                  {"a.bias", {4}},
                  {"b.weight", {4, 5}},
                  {"b.bias", {5}}});
}

std::unique_ptr<SyntheticModel> MustCreate(
    GradientProfile profile, const SyntheticModelOptions& options = {}) {
  auto model = SyntheticModel::Create(std::move(profile), options);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

Batch RandomBatch(int64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  Batch b;
  b.size = size;
  for (int64_t i = 0; i < size * SyntheticModel::kFeatureDim; ++i) {
    b.features.push_back(normal(rng));
  }
  return b;
}

TEST(SyntheticModelTest, LayoutIsTheProfiles) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->name(), "synthetic:tiny");
  EXPECT_TRUE(model->emulated());
  EXPECT_EQ(model->layout(), *TinyProfile().Layout());
  EXPECT_EQ(model->layout().total_elements(), 41);
  EXPECT_DOUBLE_EQ(model->FlopsPerExample(), 6.0 * 41);
}

TEST(SyntheticModelTest, CreateRejectsBadOptionsAndProfiles) {
  auto code = [](GradientProfile p, SyntheticModelOptions o) {
    return SyntheticModel::Create(std::move(p), o).status().code();
  };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  SyntheticModelOptions o;
  o.emulated_compute_s = -1;
  EXPECT_EQ(code(TinyProfile(), o), kBad);
  o.emulated_compute_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(code(TinyProfile(), o), kBad);
  o.emulated_compute_s = std::numeric_limits<double>::infinity();
  EXPECT_EQ(code(TinyProfile(), o), kBad);
  o = {};
  o.forward_fraction = 1.0;
  EXPECT_EQ(code(TinyProfile(), o), kBad);
  o.forward_fraction = -0.1;
  EXPECT_EQ(code(TinyProfile(), o), kBad);
  EXPECT_EQ(code(Profile({}), {}), kBad);
  EXPECT_EQ(code(Profile({{"x", {2}}, {"x", {3}}}), {}), kBad);
  EXPECT_EQ(code(Profile({{"x", {2, 0}}}), {}), kBad);
}

TEST(SyntheticModelTest, InitParamsIsSeededInUnitRange) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  std::vector<float> a(41), b(41), c(41);
  model->InitParams(1, absl::MakeSpan(a));
  model->InitParams(1, absl::MakeSpan(b));
  model->InitParams(2, absl::MakeSpan(c));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float x : a) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
  EXPECT_EQ(std::set<float>(a.begin(), a.end()).size(), a.size());
}

TEST(SyntheticModelTest, GradientAndLossAreTheClosedForm) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  std::vector<float> params(41), grads(41, std::nanf(""));
  model->InitParams(3, absl::MakeSpan(params));
  const Batch batch = RandomBatch(5, 7);
  auto loss = model->ForwardBackward(batch, params, absl::MakeSpan(grads), {});
  ASSERT_TRUE(loss.ok()) << loss.status();

  double cbar = 0;
  for (float x : batch.features) cbar += SyntheticModel::Coefficient(x);
  cbar /= batch.size;
  // Loss straight from its definition: mean over examples of
  // 0.5 * ||w - c_i u||^2.
  double want_loss = 0;
  for (float x : batch.features) {
    const double c = SyntheticModel::Coefficient(x);
    for (int64_t j = 0; j < 41; ++j) {
      const double r = params[j] - c * SyntheticModel::Pattern(j);
      want_loss += 0.5 * r * r;
    }
  }
  want_loss /= batch.size;
  EXPECT_NEAR(*loss, want_loss, 1e-6 * want_loss);
  for (int64_t j = 0; j < 41; ++j) {
    EXPECT_NEAR(grads[j], params[j] - cbar * SyntheticModel::Pattern(j), 1e-6)
        << "element " << j;
  }
  auto eval = model->Evaluate(batch, params);
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_EQ(*eval, *loss);
}

TEST(SyntheticModelTest, GradientMatchesCentralFiniteDifferences) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  std::vector<float> params(41), grads(41);
  model->InitParams(5, absl::MakeSpan(params));
  const Batch batch = RandomBatch(3, 2);
  ASSERT_TRUE(
      model->ForwardBackward(batch, params, absl::MakeSpan(grads), {}).ok());
  const float h = 1e-2f;
  for (int64_t j = 0; j < 41; ++j) {
    std::vector<float> p = params;
    const float up = params[j] + h, down = params[j] - h;
    p[j] = up;
    const double plus = *model->Evaluate(batch, p);
    p[j] = down;
    const double minus = *model->Evaluate(batch, p);
    const double numeric = (plus - minus) / (double{up} - double{down});
    EXPECT_NEAR(grads[j], numeric, 1e-4) << "element " << j;
  }
}

// The equivalence oracle at the model level: N workers taking slices r of
// each global batch of the seeded order and averaging their gradients end
// where one worker with batch N*b ends.
TEST(SyntheticModelTest, AverageOfNWorkersEqualsOneBigBatch) {
  constexpr int kWorkers = 4;
  constexpr int64_t kBatch = 8;
  constexpr int kSteps = 6;
  SyntheticClassificationOptions data_options;
  data_options.feature_dim = SyntheticModel::kFeatureDim;
  data_options.num_classes = 2;
  data_options.train_examples = 100;  // steps cross epochs
  data_options.eval_examples = 16;
  auto data = SyntheticClassification::Create(data_options);
  ASSERT_TRUE(data.ok()) << data.status();
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  const size_t n = model->layout().total_elements();
  OptimizerConfig config;
  config.lr = 0.1f;
  auto ref_opt = Optimizer::Create(config, n);
  auto dp_opt = Optimizer::Create(config, n);
  ASSERT_TRUE(ref_opt.ok() && dp_opt.ok());

  std::vector<float> ref(n), dp(n), grads(n), sum(n);
  model->InitParams(1, absl::MakeSpan(ref));
  dp = ref;
  Batch batch;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t begin = step * kWorkers * kBatch;
    ASSERT_TRUE((*data)->TrainBatch(begin, kWorkers * kBatch, &batch).ok());
    ASSERT_TRUE(
        model->ForwardBackward(batch, ref, absl::MakeSpan(grads), {}).ok());
    const std::vector<float> ref_grads = grads;
    (*ref_opt)->Apply(0, absl::MakeSpan(ref), grads, step + 1);

    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int r = 0; r < kWorkers; ++r) {
      ASSERT_TRUE((*data)->TrainBatch(begin + r * kBatch, kBatch, &batch).ok());
      ASSERT_TRUE(
          model->ForwardBackward(batch, dp, absl::MakeSpan(grads), {}).ok());
      for (size_t j = 0; j < n; ++j) sum[j] += grads[j];
    }
    for (size_t j = 0; j < n; ++j) {
      sum[j] /= kWorkers;
      ASSERT_NEAR(sum[j], ref_grads[j], 1e-5)
          << "step " << step << " element " << j;
    }
    (*dp_opt)->Apply(0, absl::MakeSpan(dp), sum, step + 1);
  }
  for (size_t j = 0; j < n; ++j) {
    EXPECT_NEAR(dp[j], ref[j], 1e-5) << "element " << j;
  }
  EXPECT_NE(dp, std::vector<float>(n, 0.0f));
}

TEST(SyntheticModelTest, OnReadyIsReverseOrderAndTensorsAreFinal) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  const TensorLayout& layout = model->layout();
  std::vector<float> params(41);
  model->InitParams(4, absl::MakeSpan(params));
  const Batch batch = RandomBatch(4, 3);
  std::vector<float> ref_grads(41);
  const double ref_loss =
      *model->ForwardBackward(batch, params, absl::MakeSpan(ref_grads), {});

  // Poison each tensor's params and gradient once it is reported: nothing
  // else may change.
  std::vector<float> grads(41);
  std::vector<int> order;
  std::vector<std::vector<float>> snapshot(layout.num_tensors());
  auto loss =
      model->ForwardBackward(batch, params, absl::MakeSpan(grads), [&](int i) {
        order.push_back(i);
        absl::Span<float> g = layout.View(i, absl::MakeSpan(grads));
        snapshot[i].assign(g.begin(), g.end());
        std::fill(g.begin(), g.end(), std::nanf(""));
        absl::Span<float> p = layout.View(i, absl::MakeSpan(params));
        std::fill(p.begin(), p.end(), std::nanf(""));
      });
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(*loss, ref_loss);
  for (int i = 0; i < layout.num_tensors(); ++i) {
    absl::Span<const float> want =
        layout.View(i, absl::MakeConstSpan(ref_grads));
    EXPECT_EQ(snapshot[i], std::vector<float>(want.begin(), want.end()))
        << layout.tensor(i).name;
  }
}

// Lower bounds only: the emulated schedule may be late on a loaded
// machine, never early.
TEST(SyntheticModelTest, EmulatedComputeTimeIsHonoured) {
  SyntheticModelOptions options;
  options.emulated_compute_s = 0.2;
  options.forward_fraction = 0.25;
  auto model = MustCreate(
      Profile({{"t0", {1000}}, {"t1", {3000}}, {"t2", {6000}}}), options);
  ASSERT_NE(model, nullptr);
  std::vector<float> params(10000), grads(10000);
  model->InitParams(1, absl::MakeSpan(params));
  std::vector<int> order;
  std::vector<double> at;
  const double start = NowSeconds();
  auto loss = model->ForwardBackward(RandomBatch(2, 1), params,
                                     absl::MakeSpan(grads), [&](int i) {
                                       order.push_back(i);
                                       at.push_back(NowSeconds() - start);
                                     });
  const double elapsed = NowSeconds() - start;
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
  ASSERT_EQ(at.size(), 3u);
  // start + forward 0.05 s + backward 0.15 s * cumulative share.
  EXPECT_GE(at[0], 0.05 + 0.15 * 0.6) << "t2 ready too early";
  EXPECT_GE(at[1], 0.05 + 0.15 * 0.9) << "t1 ready too early";
  EXPECT_GE(at[2], 0.2) << "t0 ready too early";
  EXPECT_GE(elapsed, 0.2);
}

// A profile file's measured compute (emulated_compute_s 0): the forward,
// then each gradient at its measured ready time, all times compute_scale,
// and the whole measured backward (lower bounds only, as above). A file in
// gradient-ready order is used in layout order: its first-ready tensor is
// reported first.
TEST(SyntheticModelTest, MeasuredComputeOfTheProfileIsFollowed) {
  GradientProfile measured =
      Profile({{"late", {1000}}, {"early", {3000}}, {"first", {6000}}});
  measured.order = GradientProfile::Order::kGradientReady;
  std::reverse(measured.tensors.begin(), measured.tensors.end());
  ProfileCompute compute;
  compute.batch_size = 2;
  compute.device = "cpu";
  compute.forward_s = 0.04;
  compute.backward_s = 0.08;
  compute.ready_s = {0.01, 0.05, 0.07};  // first, early, late
  measured.compute = compute;
  SyntheticModelOptions options;
  options.compute_scale = 0.5;
  auto model = MustCreate(InLayoutOrder(measured), options);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->layout().tensor(0).name, "late");
  std::vector<float> params(10000), grads(10000);
  model->InitParams(1, absl::MakeSpan(params));
  std::vector<int> order;
  std::vector<double> at;
  const double start = NowSeconds();
  auto loss = model->ForwardBackward(RandomBatch(2, 1), params,
                                     absl::MakeSpan(grads), [&](int i) {
                                       order.push_back(i);
                                       at.push_back(NowSeconds() - start);
                                     });
  const double elapsed = NowSeconds() - start;
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));  // first, early, late
  ASSERT_EQ(at.size(), 3u);
  EXPECT_GE(at[0], 0.5 * (0.04 + 0.01)) << "first ready too early";
  EXPECT_GE(at[1], 0.5 * (0.04 + 0.05)) << "early ready too early";
  EXPECT_GE(at[2], 0.5 * (0.04 + 0.07)) << "late ready too early";
  EXPECT_GE(elapsed, 0.5 * (0.04 + 0.08));
  EXPECT_TRUE(model->ScaleEmulatedCompute(2.0));  // a straggler's factor
}

TEST(SyntheticModelTest, ComputeScaleMustBePositive) {
  SyntheticModelOptions options;
  options.compute_scale = 0;
  EXPECT_EQ(SyntheticModel::Create(Profile({{"t0", {10}}}), options)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// A straggler's factor scales the emulated time (lower bound only, as
// above); a model with no emulated time cannot be scaled.
TEST(SyntheticModelTest, ScaleEmulatedComputeStretchesTheSchedule) {
  SyntheticModelOptions options;
  options.emulated_compute_s = 0.05;
  auto model = MustCreate(Profile({{"t0", {1000}}}), options);
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(model->ScaleEmulatedCompute(3.0));
  std::vector<float> params(1000), grads(1000);
  model->InitParams(1, absl::MakeSpan(params));
  const double start = NowSeconds();
  ASSERT_TRUE(model
                  ->ForwardBackward(RandomBatch(2, 1), params,
                                    absl::MakeSpan(grads), nullptr)
                  .ok());
  EXPECT_GE(NowSeconds() - start, 0.15);
  auto real = MustCreate(Profile({{"t0", {1000}}}));
  ASSERT_NE(real, nullptr);
  EXPECT_FALSE(real->ScaleEmulatedCompute(3.0));
}

TEST(SyntheticModelTest, RunsTheResNet50Profile) {
  auto profile = FindGradientProfile("resnet50");
  ASSERT_TRUE(profile.ok()) << profile.status();
  auto model = MustCreate(*profile);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->name(), "synthetic:resnet50");
  const int64_t n = model->layout().total_elements();
  ASSERT_EQ(n, 25557032);
  std::vector<float> params(n), grads(n);
  model->InitParams(1, absl::MakeSpan(params));
  std::vector<int> order;
  auto loss =
      model->ForwardBackward(RandomBatch(4, 1), params, absl::MakeSpan(grads),
                             [&](int i) { order.push_back(i); });
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_TRUE(std::isfinite(*loss));
  ASSERT_EQ(order.size(), 161u);
  for (int k = 0; k < 161; ++k) EXPECT_EQ(order[k], 160 - k);
}

TEST(SyntheticModelTest, LossDecreasesWithSgd) {
  SyntheticClassificationOptions data_options;
  data_options.feature_dim = SyntheticModel::kFeatureDim;
  data_options.num_classes = 2;
  data_options.train_examples = 512;
  data_options.eval_examples = 256;
  auto data = SyntheticClassification::Create(data_options);
  ASSERT_TRUE(data.ok()) << data.status();
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  std::vector<float> params(41), grads(41);
  model->InitParams(1, absl::MakeSpan(params));
  auto opt = Optimizer::Create(OptimizerConfig{}, params.size());
  ASSERT_TRUE(opt.ok()) << opt.status();
  Batch eval, batch;
  ASSERT_TRUE((*data)->EvalBatch(&eval).ok());
  const double before = *model->Evaluate(eval, params);
  for (int step = 0; step < 40; ++step) {
    ASSERT_TRUE((*data)->TrainBatch(step * 16, 16, &batch).ok());
    ASSERT_TRUE(
        model->ForwardBackward(batch, params, absl::MakeSpan(grads), {}).ok());
    (*opt)->Apply(0, absl::MakeSpan(params), grads, step + 1);
  }
  const double after = *model->Evaluate(eval, params);
  EXPECT_LT(after, 0.5 * before) << "eval loss " << before << " -> " << after;
}

TEST(SyntheticModelTest, BadBatchOrSpansAreInvalidArgument) {
  auto model = MustCreate(TinyProfile());
  ASSERT_NE(model, nullptr);
  std::vector<float> params(41), grads(41);
  const auto kBad = absl::StatusCode::kInvalidArgument;
  Batch b = RandomBatch(4, 1);
  b.features.pop_back();
  EXPECT_EQ(model->ForwardBackward(b, params, absl::MakeSpan(grads), {})
                .status()
                .code(),
            kBad);
  EXPECT_EQ(model->Evaluate(b, params).status().code(), kBad);
  b = RandomBatch(4, 1);
  b.size = 0;
  b.features.clear();
  EXPECT_EQ(model->Evaluate(b, params).status().code(), kBad);
  b = RandomBatch(4, 1);
  std::vector<float> short_params(40);
  EXPECT_EQ(model->Evaluate(b, short_params).status().code(), kBad);
  EXPECT_EQ(
      model->ForwardBackward(b, params, absl::MakeSpan(grads).subspan(1), {})
          .status()
          .code(),
      kBad);
}


TEST(SyntheticModelTest, ReportsParameterUseTensorByTensor) {
  auto model = MustCreate(TinyProfile());  // tensors 0..3
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->ReportsParamUse());
  testing::ParamUseLog log;
  model->SetParamUseHooks(&log.hooks);
  std::vector<float> params(model->layout().total_elements(), 0.5f);
  std::vector<float> grads(params.size());
  ASSERT_TRUE(model
                  ->ForwardBackward(RandomBatch(4, 1), params,
                                    absl::MakeSpan(grads), log.Ready())
                  .ok());
  EXPECT_EQ(log.calls,
            (std::vector<std::string>{"n0", "d0", "n1", "d1", "n2", "d2", "n3",
                                      "d3", "n3", "r3", "n2", "r2", "n1", "r1",
                                      "n0", "r0"}));
}

}  // namespace
}  // namespace ringside
