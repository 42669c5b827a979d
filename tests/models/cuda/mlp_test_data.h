// Random inputs for comparing the CUDA MLP with the CPU Mlp, and the
// tolerance they are compared with. Header-only test helpers.
#ifndef RINGSIDE_TESTS_MODELS_CUDA_MLP_TEST_DATA_H_
#define RINGSIDE_TESTS_MODELS_CUDA_MLP_TEST_DATA_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "models/dataset.h"
#include "models/mlp.h"

namespace ringside {
namespace testing {

// `size` examples of `dim` standard-normal features and uniform labels in
// [0, classes), seeded.
inline Batch RandomBatch(int64_t size, int64_t dim, int64_t classes,
                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int32_t> label(0, classes - 1);
  Batch b;
  b.size = size;
  for (int64_t i = 0; i < size * dim; ++i) b.features.push_back(normal(rng));
  for (int64_t i = 0; i < size; ++i) b.labels.push_back(label(rng));
  return b;
}

// The seeded init plus noise, so the biases are not all zero.
inline std::vector<float> RandomParams(const Mlp& mlp, uint64_t seed) {
  std::vector<float> params(mlp.layout().total_elements());
  mlp.InitParams(seed, absl::MakeSpan(params));
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  for (float& p : params) p += noise(rng);
  return params;
}

// "" if every got[i] is within 1e-4 * max|want| + 1e-6 of want[i] (cuBLAS
// sums in another order than Eigen), else the first mismatch. NaN never
// matches.
inline std::string CompareGradient(absl::Span<const float> got,
                                   absl::Span<const float> want) {
  if (got.size() != want.size()) {
    return absl::StrCat(got.size(), " floats vs ", want.size());
  }
  float scale = 0.0f;
  for (float w : want) scale = std::max(scale, std::abs(w));
  const float tolerance = 1e-4f * scale + 1e-6f;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= tolerance)) {
      return absl::StrCat("element ", i, ": ", got[i], " vs ", want[i],
                          " (tolerance ", tolerance, ")");
    }
  }
  return "";
}

}  // namespace testing
}  // namespace ringside

#endif  // RINGSIDE_TESTS_MODELS_CUDA_MLP_TEST_DATA_H_
