// PowerSGD's kernels against their definitions written out as loops: the
// products at the aliasing width (1024) and at odd shapes, the
// error-feedback passes element by element.
#include "worker/strategies/allreduce/powersgd_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ringside {
namespace {

std::vector<float> Random(int64_t n, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(engine);
  return v;
}

// A float sum of products against the double one: within float rounding
// of the sum of the terms' magnitudes, `magnitude`.
void ExpectClose(float got, double want, double magnitude) {
  EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, magnitude));
}

class LowRankProductsTest
    : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(LowRankProductsTest, EqualTheirDefinitions) {
  const auto [rows, cols, r] = GetParam();
  std::vector<float> m = Random(rows * cols, 1), q = Random(cols * r, 2);
  std::vector<float> p(rows * r), q2(cols * r), back(rows * cols);
  RowMajorMap mm(m.data(), rows, cols), qm(q.data(), cols, r),
      pm(p.data(), rows, r), q2m(q2.data(), cols, r),
      bm(back.data(), rows, cols);
  RowMajorMatrix scratch;
  LowRankProject(mm, qm, pm);
  LowRankBackProject(mm, pm, q2m, scratch);
  LowRankReconstruct(pm, q2m, bm);
  auto at = [](const std::vector<float>& v, int64_t width, int64_t i,
               int64_t j) { return static_cast<double>(v[i * width + j]); };
  for (int64_t i = 0; i < rows; i += 7) {
    for (int64_t k = 0; k < r; ++k) {
      double want = 0, magnitude = 0;  // P = M·Q
      for (int64_t j = 0; j < cols; ++j) {
        want += at(m, cols, i, j) * at(q, r, j, k);
        magnitude += std::fabs(at(m, cols, i, j) * at(q, r, j, k));
      }
      ExpectClose(p[i * r + k], want, magnitude);
    }
  }
  for (int64_t j = 0; j < cols; j += 5) {
    for (int64_t k = 0; k < r; ++k) {
      double want = 0, magnitude = 0;  // Q = Mᵀ·P
      for (int64_t i = 0; i < rows; ++i) {
        want += at(m, cols, i, j) * at(p, r, i, k);
        magnitude += std::fabs(at(m, cols, i, j) * at(p, r, i, k));
      }
      ExpectClose(q2[j * r + k], want, magnitude);
    }
  }
  for (int64_t i = 0; i < rows; i += 11) {
    for (int64_t j = 0; j < cols; j += 13) {
      double want = 0, magnitude = 0;  // M = P·Qᵀ
      for (int64_t k = 0; k < r; ++k) {
        want += at(p, r, i, k) * at(q2, r, j, k);
        magnitude += std::fabs(at(p, r, i, k) * at(q2, r, j, k));
      }
      ExpectClose(back[i * cols + j], want, magnitude);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LowRankProductsTest,
    ::testing::Values(std::make_tuple(1024, 1024, 2),
                      std::make_tuple(64, 1024, 1),
                      std::make_tuple(37, 5, 4), std::make_tuple(1, 9, 1)));

TEST(ErrorFeedbackTest, AddsKeepsAndTakes) {
  std::vector<float> g = Random(1001, 3), e = Random(1001, 4);
  const std::vector<float> g0 = g, e0 = e;
  AddError(absl::MakeSpan(g), absl::MakeSpan(e));
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i], g0[i] + e0[i]);
    EXPECT_EQ(e[i], g[i]);
  }
  const std::vector<float> input = e;
  std::vector<float> result = Random(1001, 5);
  TakeResult(result, absl::MakeSpan(e));
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(e[i], input[i] - result[i]);
}

}  // namespace
}  // namespace ringside
