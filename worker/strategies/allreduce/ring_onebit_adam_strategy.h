// RingOneBitAdamStrategy ("ring_onebit_adam"): 1-bit Adam (Tang et al.,
// ICML 2021; DeepSpeed's OnebitAdam) on ring (ring_strategy.h: its
// buckets, overlap with backward, checkpoints). The first
// --compression_start_step steps (1-bit Adam's freeze_step) are ring with
// Adam, exactly; after them each rank sends its momentum update as one bit
// an element and a scale a tensor (onebit_adam_hook.h, error feedback) and
// applies Adam with the averaged momentum and the variance frozen at the
// warm-up's end (onebit_adam_optimizer.h). Needs --optimizer=adam and
// --compression_start_step >= 1 (Init refuses otherwise, naming the flag).
// With the warm-up past the run's last step it equals ring with Adam (the
// oracle's setting). Its checkpoints: rank 0's Adam state (the momentum
// every rank holds alike, the frozen variance) and every rank's error
// feedback and step counts.
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of the buffer
// times the hook's TakeWireShare. CPU buffers (CUDA workers stage it
// through host memory). Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_ONEBIT_ADAM_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_ONEBIT_ADAM_STRATEGY_H_

#include <memory>

#include "worker/strategies/allreduce/onebit_adam_optimizer.h"
#include "worker/strategies/allreduce/ring_strategy.h"

namespace ringside {

class RingOneBitAdamStrategy final : public RingStrategy {
 public:
  RingOneBitAdamStrategy();

 protected:
  absl::StatusOr<std::unique_ptr<LocalOptimizer>> MakeOptimizer(
      const SyncContext& context) override;

 private:
  // The rule the ranks apply (owned by ring's LocalOptimizer), whose
  // momentum the hook reads.
  OneBitAdamOptimizer* rule_ = nullptr;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_ONEBIT_ADAM_STRATEGY_H_
