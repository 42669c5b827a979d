// RingPowerSgdStrategy ("ring_powersgd"): ring (ring_strategy.h: its
// buckets, overlap with backward and local optimizer) with PowerSGD's
// low-rank compression as its bucket hook (powersgd_hook.h; PyTorch DDP's
// powerSGD_hook), options in powersgd_options.h (the paper's rank 2, warm
// start and error feedback by default; a study runs the registry's
// language-model setting, rank 4 after 8 exact steps). Lossy below full
// rank. Its checkpoints carry the hook's state (the error-feedback memory,
// the warm-start Qs, each bucket's step), so a resumed run continues the
// same one.
// Its oracle tolerance is 1e-2, as ring_fp16's: at full rank P·Qᵀ equals
// the mean up to float rounding (SGD + momentum lands within 1e-6 of the
// reference), but where a gradient element is exactly 0 (a unit ReLU
// switched off) the reconstruction leaves rounding noise, which Adam,
// dividing each update by the gradient's running RMS, turns into a step
// (2e-3 to 4e-3 with the oracle's MLP).
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of what the
// hook packed (the hook's TakeWireShare of the buffer).
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_POWERSGD_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_POWERSGD_STRATEGY_H_

#include "worker/strategies/allreduce/powersgd_hook.h"
#include "worker/strategies/allreduce/ring_strategy.h"

namespace ringside {

class RingPowerSgdStrategy final : public RingStrategy {
 public:
  RingPowerSgdStrategy()
      : RingStrategy("ring_powersgd", MakePowerSgdHook()) {}
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_POWERSGD_STRATEGY_H_
