// Learning-rate scaling with the global batch, as data-parallel training
// practice sets it: none, linear (Goyal et al. 2017: lr x G / B_ref) or
// sqrt (lr x sqrt(G / B_ref)), where G = workers x batch per worker x
// accumulated passes is the batch of one update and B_ref the batch the
// base learning rate was tuned for. Workers compute the scaled rate once,
// before they register, so parameter servers and shards receive it in the
// optimizer config and every optimizer applies the same float.
#ifndef RINGSIDE_CORE_LR_SCALING_H_
#define RINGSIDE_CORE_LR_SCALING_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ringside {

enum class LrScaling { kNone, kLinear, kSqrt };

// "none", "linear" or "sqrt"; INVALID_ARGUMENT naming the known rules.
absl::StatusOr<LrScaling> ParseLrScaling(const std::string& name);
std::string LrScalingName(LrScaling rule);

// `lr` scaled by `rule` from `reference_batch` to `global_batch` (both
// > 0, else INVALID_ARGUMENT naming them), computed in double and rounded
// once to float.
absl::StatusOr<float> ScaledLr(float lr, LrScaling rule, int64_t global_batch,
                               int64_t reference_batch);

}  // namespace ringside

#endif  // RINGSIDE_CORE_LR_SCALING_H_
