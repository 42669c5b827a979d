// RingSignStrategy ("ring_sign"): ring (ring_strategy.h: its buckets,
// overlap with backward and local optimizer) with scaled sign compression
// and error feedback as its bucket hook (sign_hook.h: EF-SignSGD), about
// 1/32 of ring's bytes. Lossy, with no setting that equals the exact
// strategies (NoExactSetting: the oracles check that its ranks agree and
// that it trains, and record its gap to the reference). Plain steps first
// with --compression_start_step (compression_start_options.h). Its
// checkpoints carry the hook's error feedback and step counts.
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of the buffer
// times the hook's TakeWireShare (an all-gather of the bits and scales).
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_SIGN_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_SIGN_STRATEGY_H_

#include "worker/strategies/allreduce/ring_strategy.h"
#include "worker/strategies/allreduce/sign_hook.h"

namespace ringside {

class RingSignStrategy final : public RingStrategy {
 public:
  RingSignStrategy() : RingStrategy("ring_sign", MakeSignHook()) {}
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_SIGN_STRATEGY_H_
