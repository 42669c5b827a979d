// How far one model's tensors are from another's: the worst tensor's
// relative L2 distance (common/relative_l2.h) and its name, a loss's
// relative distance, and a bf16 run's distances from the CPU's bf16 and
// float32 runs, recorded and printed. Header-only test helpers.
#ifndef RINGSIDE_TESTS_TESTING_TENSOR_DISTANCE_H_
#define RINGSIDE_TESTS_TESTING_TENSOR_DISTANCE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/relative_l2.h"
#include "core/tensor_layout.h"

namespace ringside::testing {

struct WorstTensor {
  double distance = 0;  // relative L2
  std::string name;     // the tensor's; empty when the layout has none
};

// Over the tensors of `layout`, the largest RelativeL2(a's, b's).
inline WorstTensor WorstTensorDistance(const TensorLayout& layout,
                                       absl::Span<const float> a,
                                       absl::Span<const float> b) {
  WorstTensor worst;
  for (int i = 0; i < layout.num_tensors(); ++i) {
    const double d = RelativeL2(layout.View(i, a), layout.View(i, b));
    if (worst.name.empty() || d > worst.distance) {
      worst = {d, layout.tensor(i).name};
    }
  }
  return worst;
}

// |a - b| / max(1, |b|).
inline double LossDistance(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::abs(b));
}

// A bf16 run's loss and gradients against the CPU's bf16 run and float32
// run on the same input.
struct Bf16Distances {
  double loss_vs_bf16 = 0;
  double loss_vs_fp32 = 0;
  WorstTensor grads_vs_bf16;
  WorstTensor grads_vs_fp32;

  // Records them as the running test's XML properties and prints one line,
  // "<label>: against the CPU bf16 loss L, worst gradient tensor G (name);
  // against float32 ..." (tools/gpu_check.sh collects the lines).
  void Report(const std::string& label) const {
    ::testing::Test::RecordProperty("bf16_vs_cpu_bf16_loss",
                                    absl::StrCat(loss_vs_bf16));
    ::testing::Test::RecordProperty("bf16_vs_cpu_bf16_gradient_worst",
                                    absl::StrCat(grads_vs_bf16.distance));
    ::testing::Test::RecordProperty("bf16_vs_fp32_loss",
                                    absl::StrCat(loss_vs_fp32));
    ::testing::Test::RecordProperty("bf16_vs_fp32_gradient_worst",
                                    absl::StrCat(grads_vs_fp32.distance));
    std::printf(
        "%s: against the CPU bf16 loss %.3g, worst gradient tensor %.3g "
        "(%s); against float32 loss %.3g, worst gradient tensor %.3g (%s) "
        "(relative L2)\n",
        label.c_str(), loss_vs_bf16, grads_vs_bf16.distance,
        grads_vs_bf16.name.c_str(), loss_vs_fp32, grads_vs_fp32.distance,
        grads_vs_fp32.name.c_str());
  }
};

inline Bf16Distances MeasureBf16(const TensorLayout& layout, double loss,
                                 absl::Span<const float> grads,
                                 double bf16_loss,
                                 absl::Span<const float> bf16_grads,
                                 double fp32_loss,
                                 absl::Span<const float> fp32_grads) {
  return {LossDistance(loss, bf16_loss), LossDistance(loss, fp32_loss),
          WorstTensorDistance(layout, grads, bf16_grads),
          WorstTensorDistance(layout, grads, fp32_grads)};
}

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_TENSOR_DISTANCE_H_
