// Zero2Strategy ("zero2"): ZeRO stage 2 (Rajbhandari et al., SC'20) over the
// job's Gloo group. Init connects the collective through the job's store,
// broadcasts rank 0's initial parameters and makes this rank's
// ShardedOptimizer (worker/strategies/sharded_optimizer.h: optimizer state
// for its byte-balanced shard only). FinishStep reduce-scatters (averages) the gradient buffer, so each rank ends with its own shard's averaged gradient only, steps the
// optimizer on this rank's shard and all-gathers the parameters: every
// rank ends bit-identical. Communication starts when backward has ended
// (no overlap with it). CUDA workers stage through host memory (not yet
// over NCCL). No checkpoints.
// Timeline (SyncOptions::timeline, when set): REDUCE_SCATTER on lane "step", then
// the ShardedOptimizer's OPTIMIZER and ALLGATHER.
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_ZERO2_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ZERO2_STRATEGY_H_

#include <memory>
#include <string>

#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/sharded_optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class Zero2Strategy : public SyncStrategy {
 public:
  std::string name() const override { return "zero2"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<ShardedOptimizer> optimizer_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ZERO2_STRATEGY_H_
