// RelativeL2: how far a float vector is from a reference, ‖a − b‖₂ / ‖b‖₂
// in double precision, the measure the oracles, the GPU-against-CPU tests
// and the benchmarks' PyTorch checks state their bounds in. 1 when the
// sizes differ or b is empty (nothing comparable); ‖a − b‖₂ itself when b
// is all zeros.
#ifndef RINGSIDE_COMMON_RELATIVE_L2_H_
#define RINGSIDE_COMMON_RELATIVE_L2_H_

#include <cmath>
#include <cstddef>

#include "absl/types/span.h"

namespace ringside {

inline double RelativeL2(absl::Span<const float> a, absl::Span<const float> b) {
  if (a.size() != b.size() || b.empty()) return 1.0;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff += d * d;
    norm += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return norm > 0 ? std::sqrt(diff) / std::sqrt(norm) : std::sqrt(diff);
}

}  // namespace ringside

#endif  // RINGSIDE_COMMON_RELATIVE_L2_H_
