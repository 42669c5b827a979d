#include "models/mlp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/relative_l2.h"
#include "gtest/gtest.h"
#include "models/optimizer.h"
#include "models/precision.h"
#include "models/synthetic_classification.h"
#include "tests/models/cuda/mlp_test_data.h"
#include "tests/testing/param_use_log.h"
#include "tests/testing/tensor_distance.h"

namespace ringside {
namespace {

std::unique_ptr<Mlp> MustCreate(std::vector<int64_t> widths) {
  auto mlp = Mlp::Create(std::move(widths));
  EXPECT_TRUE(mlp.ok()) << mlp.status();
  return mlp.ok() ? *std::move(mlp) : nullptr;
}

using testing::RandomBatch;

TEST(MlpTest, LayoutNamesAndShapes) {
  auto mlp = MustCreate({5, 7, 3});
  ASSERT_NE(mlp, nullptr);
  const TensorLayout& layout = mlp->layout();
  ASSERT_EQ(layout.num_tensors(), 4);
  EXPECT_EQ(layout.tensor(0).name, "fc0.weight");
  EXPECT_EQ(layout.tensor(0).shape, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(layout.tensor(1).name, "fc0.bias");
  EXPECT_EQ(layout.tensor(1).shape, (std::vector<int64_t>{7}));
  EXPECT_EQ(layout.tensor(2).name, "fc1.weight");
  EXPECT_EQ(layout.tensor(2).shape, (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(layout.tensor(3).name, "fc1.bias");
  EXPECT_EQ(layout.total_elements(), 5 * 7 + 7 + 7 * 3 + 3);
  EXPECT_DOUBLE_EQ(mlp->FlopsPerExample(), 6.0 * (5 * 7 + 7 * 3));
  EXPECT_EQ(mlp->name(), "mlp");
}

TEST(MlpTest, CreateRejectsBadWidths) {
  EXPECT_EQ(Mlp::Create({5}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Mlp::Create({5, 0, 3}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Mlp::Create({5, 7, -3}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MlpTest, InitParamsIsSeededHeUniformWithZeroBias) {
  auto mlp = MustCreate({64, 32, 10});
  ASSERT_NE(mlp, nullptr);
  const int64_t n = mlp->layout().total_elements();
  std::vector<float> a(n), b(n), c(n);
  mlp->InitParams(1, absl::MakeSpan(a));
  mlp->InitParams(1, absl::MakeSpan(b));
  mlp->InitParams(2, absl::MakeSpan(c));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const float limit = std::sqrt(6.0f / 64.0f);
  float max_abs = 0;
  for (float w : mlp->layout().View(0, absl::MakeConstSpan(a))) {
    max_abs = std::max(max_abs, std::fabs(w));
  }
  EXPECT_LE(max_abs, limit);
  EXPECT_GT(max_abs, 0.9f * limit);
  for (float x : mlp->layout().View(1, absl::MakeConstSpan(a))) {
    EXPECT_EQ(x, 0.0f);
  }
}

TEST(MlpTest, GradientMatchesCentralFiniteDifferences) {
  auto mlp = MustCreate({5, 7, 6, 3});
  ASSERT_NE(mlp, nullptr);
  const TensorLayout& layout = mlp->layout();
  const int64_t n = layout.total_elements();
  std::vector<float> params(n);
  mlp->InitParams(11, absl::MakeSpan(params));
  // Non-zero biases so their gradients are exercised off the init point.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> small(-0.1f, 0.1f);
  for (int l = 0; l < 3; ++l) {
    for (float& x : layout.View(2 * l + 1, absl::MakeSpan(params))) {
      x = small(rng);
    }
  }
  const Batch batch = RandomBatch(4, 5, 3, 9);

  std::vector<float> grads(n, std::numeric_limits<float>::quiet_NaN());
  auto loss = mlp->ForwardBackward(batch, params, absl::MakeSpan(grads), {});
  ASSERT_TRUE(loss.ok()) << loss.status();
  auto eval_loss = mlp->Evaluate(batch, params);
  ASSERT_TRUE(eval_loss.ok());
  EXPECT_DOUBLE_EQ(*loss, *eval_loss);

  const float h = 1e-2f;
  double worst = 0;
  int64_t worst_i = -1;
  double worst_analytic = 0, worst_numeric = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> p = params;
    const float up = params[i] + h, down = params[i] - h;
    p[i] = up;
    const double plus = *mlp->Evaluate(batch, p);
    p[i] = down;
    const double minus = *mlp->Evaluate(batch, p);
    const double numeric = (plus - minus) / (double{up} - double{down});
    const double analytic = grads[i];
    ASSERT_FALSE(std::isnan(analytic)) << "gradient " << i << " not written";
    // Relative error, with a floor so tiny gradients compare absolutely.
    const double err =
        std::fabs(analytic - numeric) /
        std::max({std::fabs(analytic), std::fabs(numeric), 1e-2});
    if (err > worst) {
      worst = err, worst_i = i;
      worst_analytic = analytic, worst_numeric = numeric;
    }
  }
  EXPECT_LT(worst, 2e-2) << "worst relative gradient error at element "
                         << worst_i << ": analytic " << worst_analytic
                         << " vs finite difference " << worst_numeric << "\n"
                         << layout.DebugString();
}

TEST(MlpTest, GradientIsMeanOverBatch) {
  auto mlp = MustCreate({6, 8, 4});
  ASSERT_NE(mlp, nullptr);
  const int64_t n = mlp->layout().total_elements();
  std::vector<float> params(n);
  mlp->InitParams(3, absl::MakeSpan(params));
  const Batch whole = RandomBatch(8, 6, 4, 1);
  Batch halves[2];
  for (int h = 0; h < 2; ++h) {
    halves[h].size = 4;
    halves[h].features.assign(whole.features.begin() + h * 24,
                              whole.features.begin() + (h + 1) * 24);
    halves[h].labels.assign(whole.labels.begin() + h * 4,
                            whole.labels.begin() + (h + 1) * 4);
  }
  std::vector<float> g(n), g0(n), g1(n);
  const double loss =
      *mlp->ForwardBackward(whole, params, absl::MakeSpan(g), {});
  const double l0 =
      *mlp->ForwardBackward(halves[0], params, absl::MakeSpan(g0), {});
  const double l1 =
      *mlp->ForwardBackward(halves[1], params, absl::MakeSpan(g1), {});
  EXPECT_NEAR(loss, (l0 + l1) / 2, 1e-6);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(g[i], (g0[i] + g1[i]) / 2, 1e-6) << "element " << i;
  }
}

TEST(MlpTest, OnReadyIsLastLayerFirstOncePerTensor) {
  auto mlp = MustCreate({5, 7, 6, 3});
  ASSERT_NE(mlp, nullptr);
  std::vector<float> params(mlp->layout().total_elements());
  std::vector<float> grads(params.size());
  mlp->InitParams(1, absl::MakeSpan(params));
  std::vector<int> order;
  auto loss = mlp->ForwardBackward(RandomBatch(4, 5, 3, 2), params,
                                   absl::MakeSpan(grads),
                                   [&](int i) { order.push_back(i); });
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(order, (std::vector<int>{4, 5, 2, 3, 0, 1}));
  std::set<int> seen(order.begin(), order.end());
  EXPECT_EQ(seen.size(), order.size()) << "a tensor was reported twice";
  for (size_t k = 1; k < order.size(); ++k) {
    EXPECT_LE(order[k] / 2, order[k - 1] / 2) << "layer order at call " << k;
  }
}

// The readiness contract: at on_ready(i), tensor i's gradient is final and
// the model never reads tensor i's parameters or gradient again, so a
// strategy may overwrite both. Poisoning them must change nothing else.
TEST(MlpTest, OnReadyTensorsAreFinalAndNoLongerRead) {
  auto mlp = MustCreate({5, 7, 6, 3});
  ASSERT_NE(mlp, nullptr);
  const TensorLayout& layout = mlp->layout();
  std::vector<float> params(layout.total_elements());
  mlp->InitParams(4, absl::MakeSpan(params));
  const Batch batch = RandomBatch(4, 5, 3, 3);

  std::vector<float> ref_grads(params.size());
  const double ref_loss =
      *mlp->ForwardBackward(batch, params, absl::MakeSpan(ref_grads), {});

  std::vector<float> grads(params.size());
  std::vector<std::vector<float>> snapshot(layout.num_tensors());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto loss =
      mlp->ForwardBackward(batch, params, absl::MakeSpan(grads), [&](int i) {
        absl::Span<float> g = layout.View(i, absl::MakeSpan(grads));
        snapshot[i].assign(g.begin(), g.end());
        std::fill(g.begin(), g.end(), nan);
        absl::Span<float> p = layout.View(i, absl::MakeSpan(params));
        std::fill(p.begin(), p.end(), nan);
      });
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(*loss, ref_loss);
  for (int i = 0; i < layout.num_tensors(); ++i) {
    absl::Span<const float> want =
        layout.View(i, absl::MakeConstSpan(ref_grads));
    ASSERT_EQ(snapshot[i].size(), want.size()) << layout.tensor(i).name;
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(snapshot[i][k], want[k])
          << layout.tensor(i).name << "[" << k << "]";
    }
  }
}

// Both precisions train: 50 SGD steps lower the eval loss, bf16's to
// within 2% of float32's and not to the same value.
TEST(MlpTest, LossDecreasesWithSgdOnSyntheticData) {
  SyntheticClassificationOptions data_options;
  data_options.feature_dim = 16;
  data_options.num_classes = 4;
  data_options.train_examples = 2048;
  data_options.eval_examples = 512;
  data_options.seed = 3;
  auto data = SyntheticClassification::Create(data_options);
  ASSERT_TRUE(data.ok()) << data.status();
  Batch eval;
  ASSERT_TRUE((*data)->EvalBatch(&eval).ok());
  double after[2] = {0, 0};
  for (Precision precision : {Precision::kFp32, Precision::kBf16}) {
    auto mlp = Mlp::Create({16, 32, 4}, precision);
    ASSERT_TRUE(mlp.ok()) << mlp.status();
    std::vector<float> params((*mlp)->layout().total_elements());
    std::vector<float> grads(params.size());
    (*mlp)->InitParams(1, absl::MakeSpan(params));
    OptimizerConfig config;
    config.lr = 0.05f;
    config.momentum = 0.9f;
    auto opt = Optimizer::Create(config, params.size());
    ASSERT_TRUE(opt.ok()) << opt.status();
    const double before = *(*mlp)->Evaluate(eval, params);
    constexpr int kBatch = 32;
    for (int step = 1; step <= 50; ++step) {
      Batch batch;
      ASSERT_TRUE(
          (*data)->TrainBatch((step - 1) * kBatch, kBatch, &batch).ok());
      auto loss =
          (*mlp)->ForwardBackward(batch, params, absl::MakeSpan(grads), {});
      ASSERT_TRUE(loss.ok()) << loss.status();
      (*opt)->Apply(0, absl::MakeSpan(params), grads, step);
    }
    double& end = after[precision == Precision::kBf16];
    end = *(*mlp)->Evaluate(eval, params);
    EXPECT_LT(end, 0.7 * before) << PrecisionName(precision) << ": eval loss "
                                 << before << " -> " << end;
  }
  EXPECT_NE(after[1], after[0]);
  EXPECT_NEAR(after[1], after[0], 0.02 * after[0]);
}

TEST(MlpBf16Test, RoundsTheProductsOperandsOnly) {
  auto fp32 = MustCreate({24, 5});
  auto bf16 = Mlp::Create({24, 5}, Precision::kBf16);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ((*bf16)->precision(), Precision::kBf16);
  EXPECT_EQ(fp32->precision(), Precision::kFp32);
  std::vector<float> params(fp32->layout().total_elements());
  fp32->InitParams(3, absl::MakeSpan(params));
  RoundToBf16(params, absl::MakeSpan(params));
  Batch batch = RandomBatch(16, 24, 5, 9);
  RoundToBf16(batch.features, absl::MakeSpan(batch.features));
  std::vector<float> g32(params.size()), g16(params.size());
  absl::StatusOr<double> l32 =
      fp32->ForwardBackward(batch, params, absl::MakeSpan(g32), {});
  absl::StatusOr<double> l16 =
      (*bf16)->ForwardBackward(batch, params, absl::MakeSpan(g16), {});
  ASSERT_TRUE(l32.ok() && l16.ok());
  EXPECT_EQ(*l16, *l32);
  EXPECT_EQ(*(*bf16)->Evaluate(batch, params), *fp32->Evaluate(batch, params));
  const TensorLayout& layout = fp32->layout();
  // The bias gradient sums the float32 delta: equal; the weight gradient
  // multiplies the rounded delta: not.
  EXPECT_TRUE(std::equal(layout.View(1, absl::MakeConstSpan(g16)).begin(),
                         layout.View(1, absl::MakeConstSpan(g16)).end(),
                         layout.View(1, absl::MakeConstSpan(g32)).begin()));
  EXPECT_GT(RelativeL2(layout.View(0, absl::MakeConstSpan(g16)),
                       layout.View(0, absl::MakeConstSpan(g32))),
            0.0);
}

// How far bf16's arithmetic lands from float32's on the CUDA tests' shapes
// and data (cuda_mlp_test.cc's CudaMlpBf16Test, mlp_test_data.h), and how
// far it moves when the input moves by float32's rounding (one ulp per
// feature, the size of the differences between cuBLAS's and Eigen's
// orders of summation). These measure the bounds the GPU test declares:
// against float32, up to 0.087 relative L2 on a gradient tensor (the
// layers below the output: a delta sums terms that cancel, the softmax
// gradient's, and an activation near zero flips its ReLU), hence 0.15,
// and up to 1.7e-3 on the loss, hence 1e-2; against this CPU model in
// bf16, what the nudge moves: nothing where every nudged feature rounds to
// the same bfloat16 value, 1.2e-3 at 784-512-512-10, batch 64 (a few cross
// a rounding boundary and an activation near zero flips its ReLU), hence
// 1e-2. Each case prints what it measured; rounding must show (above
// 1e-4).
class MlpBf16DistanceTest
    : public ::testing::TestWithParam<std::tuple<std::vector<int64_t>, int>> {};

TEST_P(MlpBf16DistanceTest, WithinTheCudaTestsBounds) {
  const auto& [widths, batch_size] = GetParam();
  auto fp32 = MustCreate(widths);
  auto bf16 = Mlp::Create(widths, Precision::kBf16);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  const std::vector<float> params = testing::RandomParams(*fp32, 7);
  const Batch batch =
      RandomBatch(batch_size, widths.front(), widths.back(), 11);
  Batch nudged = batch;
  std::mt19937_64 rng(13);
  for (float& f : nudged.features) {
    f = std::nextafter(f, rng() % 2 ? 1e30f : -1e30f);
  }
  std::vector<float> g32(params.size()), g16(params.size()),
      g16_nudged(params.size());
  absl::StatusOr<double> l32 =
      fp32->ForwardBackward(batch, params, absl::MakeSpan(g32), {});
  absl::StatusOr<double> l16 =
      (*bf16)->ForwardBackward(batch, params, absl::MakeSpan(g16), {});
  absl::StatusOr<double> l16_nudged =
      (*bf16)->ForwardBackward(nudged, params, absl::MakeSpan(g16_nudged), {});
  ASSERT_TRUE(l32.ok() && l16.ok() && l16_nudged.ok());
  const double loss_error = testing::LossDistance(*l16, *l32);
  const TensorLayout& layout = fp32->layout();
  const double vs_fp32 =
      testing::WorstTensorDistance(layout, g16, g32).distance;
  const double nudge =
      testing::WorstTensorDistance(layout, g16_nudged, g16).distance;
  EXPECT_LE(loss_error, 1e-2);
  EXPECT_LE(vs_fp32, 0.15);
  EXPECT_GT(vs_fp32, 1e-4);
  EXPECT_LE(nudge, 1e-2);
  RecordProperty("bf16_loss_relative_error", absl::StrCat(loss_error));
  RecordProperty("bf16_gradient_relative_l2_worst", absl::StrCat(vs_fp32));
  RecordProperty("bf16_nudged_relative_l2_worst", absl::StrCat(nudge));
  std::printf(
      "cpu bf16, widths %s, batch %d: vs float32 loss %.3g, worst "
      "gradient tensor %.3g (relative L2); input nudged one ulp: "
      "%.3g\n",
      absl::StrJoin(widths, "-").c_str(), batch_size, loss_error, vs_fp32,
      nudge);
}

INSTANTIATE_TEST_SUITE_P(
    CudaTestShapes, MlpBf16DistanceTest,
    ::testing::Combine(::testing::Values(std::vector<int64_t>{20, 33, 10},
                                         std::vector<int64_t>{64, 100, 50, 7},
                                         std::vector<int64_t>{784, 512, 512,
                                                              10}),
                       ::testing::Values(13, 64)));

TEST(MlpTest, BadBatchIsInvalidArgument) {
  auto mlp = MustCreate({5, 7, 3});
  ASSERT_NE(mlp, nullptr);
  std::vector<float> params(mlp->layout().total_elements());
  std::vector<float> grads(params.size());
  mlp->InitParams(1, absl::MakeSpan(params));
  auto expect_bad = [&](const Batch& b, const std::string& what) {
    absl::Status s =
        mlp->ForwardBackward(b, params, absl::MakeSpan(grads), {}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s;
    EXPECT_EQ(mlp->Evaluate(b, params).status().code(),
              absl::StatusCode::kInvalidArgument)
        << what;
  };
  const Batch good = RandomBatch(4, 5, 3, 1);
  ASSERT_TRUE(mlp->Evaluate(good, params).ok());
  Batch b = good;
  b.features.pop_back();
  expect_bad(b, "features");
  b = good, b.labels.push_back(0);
  expect_bad(b, "labels");
  b = good, b.labels[2] = 3;
  expect_bad(b, "label 2");
  b = good, b.labels[0] = -1;
  expect_bad(b, "label 0");
  b = good, b.size = 0;
  expect_bad(b, "size");
  // Wrongly sized params / grads are caught too.
  std::vector<float> short_params(params.size() - 1);
  EXPECT_EQ(mlp->Evaluate(good, short_params).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      mlp->ForwardBackward(good, params, absl::MakeSpan(grads).subspan(1), {})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(MlpTest, ReportsParameterUseInForwardAndBackward) {
  auto mlp = MustCreate({5, 7, 6, 3});  // tensors fc0.w 0, fc0.b 1, ... 5
  ASSERT_NE(mlp, nullptr);
  ASSERT_TRUE(mlp->ReportsParamUse());
  testing::ParamUseLog log;
  mlp->SetParamUseHooks(&log.hooks);
  std::vector<float> params(mlp->layout().total_elements());
  mlp->InitParams(1, absl::MakeSpan(params));
  std::vector<float> grads(params.size());
  const Batch batch = RandomBatch(4, 5, 3, 9);
  ASSERT_TRUE(
      mlp->ForwardBackward(batch, params, absl::MakeSpan(grads), log.Ready())
          .ok());
  // Forward layer by layer; backward reads fc2's and fc1's weights for the
  // input gradients, never fc0's.
  EXPECT_EQ(log.calls,
            (std::vector<std::string>{"n0", "n1", "d0", "d1", "n2", "n3", "d2",
                                      "d3", "n4", "n5", "d4", "d5", "n4", "r4",
                                      "r5", "n2", "r2", "r3", "r0", "r1"}));
  // Evaluate calls nothing; nor does a model whose hooks were taken back.
  log.calls.clear();
  ASSERT_TRUE(mlp->Evaluate(batch, params).ok());
  mlp->SetParamUseHooks(nullptr);
  ASSERT_TRUE(
      mlp->ForwardBackward(batch, params, absl::MakeSpan(grads), {}).ok());
  EXPECT_TRUE(log.calls.empty());
}

}  // namespace
}  // namespace ringside
