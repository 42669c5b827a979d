#include "core/lr_scaling.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ringside {

absl::StatusOr<LrScaling> ParseLrScaling(const std::string& name) {
  if (name == "none") return LrScaling::kNone;
  if (name == "linear") return LrScaling::kLinear;
  if (name == "sqrt") return LrScaling::kSqrt;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown learning-rate scaling '", name, "' (known: none, linear, sqrt)"));
}

std::string LrScalingName(LrScaling rule) {
  switch (rule) {
    case LrScaling::kNone:
      return "none";
    case LrScaling::kLinear:
      return "linear";
    case LrScaling::kSqrt:
      return "sqrt";
  }
  return "none";
}

absl::StatusOr<float> ScaledLr(float lr, LrScaling rule, int64_t global_batch,
                               int64_t reference_batch) {
  if (global_batch <= 0 || reference_batch <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "learning-rate scaling needs a global batch and a reference batch > "
        "0, got ",
        global_batch, " and ", reference_batch));
  }
  const double ratio =
      static_cast<double>(global_batch) / static_cast<double>(reference_batch);
  switch (rule) {
    case LrScaling::kNone:
      return lr;
    case LrScaling::kLinear:
      return static_cast<float>(lr * ratio);
    case LrScaling::kSqrt:
      return static_cast<float>(lr * std::sqrt(ratio));
  }
  return lr;
}

}  // namespace ringside
