// A training step as two floats of 24 bits each (exact for steps below
// 2^48), to travel through float collectives and in a strategy's float
// state (checkpoints); StepFromFloats inverts it.
#ifndef RINGSIDE_CORE_STEP_FLOATS_H_
#define RINGSIDE_CORE_STEP_FLOATS_H_

#include <cstdint>
#include <utility>

namespace ringside {

inline constexpr int64_t kStepFloatLow = int64_t{1} << 24;

inline std::pair<float, float> StepAsFloats(int64_t step) {
  return {static_cast<float>(step / kStepFloatLow),
          static_cast<float>(step % kStepFloatLow)};
}

inline int64_t StepFromFloats(float high, float low) {
  return static_cast<int64_t>(high) * kStepFloatLow +
         static_cast<int64_t>(low);
}

}  // namespace ringside

#endif  // RINGSIDE_CORE_STEP_FLOATS_H_
