// RingTopkStrategy ("ring_topk"): ring (ring_strategy.h: its buckets,
// overlap with backward and local optimizer) with top-k sparsification and
// error feedback as its bucket hook (topk_hook.h), --topk_ratio in
// topk_options.h (1% by default), plain steps first with
// --compression_start_step (compression_start_options.h; its row's
// variant names them). Lossy below ratio 1. Its checkpoints carry the
// hook's error feedback and step counts, so a resumed run continues the
// same one.
// Its oracle tolerance is 1e-2, as the other compression hooks': at ratio 1
// it sends every element and equals ring up to the order of the sum
// (the registry oracle runs it so).
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of the buffer
// times the hook's TakeWireShare (an all-gather of the pairs).
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_TOPK_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_TOPK_STRATEGY_H_

#include "worker/strategies/allreduce/ring_strategy.h"
#include "worker/strategies/allreduce/topk_hook.h"

namespace ringside {

class RingTopkStrategy final : public RingStrategy {
 public:
  RingTopkStrategy() : RingStrategy("ring_topk", MakeTopkHook()) {}
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_TOPK_STRATEGY_H_
