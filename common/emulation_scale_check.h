// The one check of an emulation scale S (--emulation_scale: tensors and
// links at 1/S, models/gradient_profiles.h's ScaledProfile,
// worker/emulation_scale.h, experiments/job/network_shape.h): OK when S is
// finite and >= 1, else INVALID_ARGUMENT naming the flag and the value.
#ifndef RINGSIDE_COMMON_EMULATION_SCALE_CHECK_H_
#define RINGSIDE_COMMON_EMULATION_SCALE_CHECK_H_

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ringside {

inline absl::Status CheckEmulationScale(double scale) {
  if (std::isfinite(scale) && scale >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--emulation_scale must be a finite number >= 1, got ", scale));
}

}  // namespace ringside

#endif  // RINGSIDE_COMMON_EMULATION_SCALE_CHECK_H_
