// ZeroStrategy: ZeRO stages 1 and 2 (Rajbhandari et al., SC'20) over the
// job's Gloo group, registered as "zero1" (Zero1Strategy) and "zero2"
// (Zero2Strategy). Init connects the collective through the job's store,
// broadcasts rank 0's initial parameters and makes this rank's
// ShardedOptimizer (worker/strategies/sharded_optimizer.h: optimizer state
// for its byte-balanced shard only). FinishStep reduces the gradients —
// stage 1 all-reduces (averages) the whole buffer, stage 2 reduce-scatters
// it so each rank ends with its own shard's average only — then steps the
// optimizer on this rank's shard and all-gathers the parameters: every
// rank ends bit-identical. Communication starts when backward has ended
// (no overlap with it). CUDA workers run on their device buffers: NCCL
// reduce-scatter / all-reduce and all-gather, the shard's optimizer on the
// device (compile-checked only until a GPU session runs
// tools/gpu_check.sh; no checkpoints there). Checkpoints: every rank
// writes its own shard
// (ShardedOptimizer::MaybeCheckpoint); --resume needs the same number of
// workers.
// Timeline (SyncOptions::timeline, when set): ALLREDUCE (stage 1) or
// REDUCE_SCATTER (stage 2) on every tensor's lane (one collective over the
// whole buffer), then the ShardedOptimizer's OPTIMIZER and ALLGATHER.
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_ZERO_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ZERO_STRATEGY_H_

#include <memory>
#include <string>

#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/sharded_optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class ZeroStrategy : public SyncStrategy {
 public:
  std::string name() const override;
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu || device == Device::kCuda;
  }
  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 protected:
  explicit ZeroStrategy(int stage) : stage_(stage) {}

 private:
  const int stage_;  // 1 or 2
  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<ShardedOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from checkpoints
};

class Zero1Strategy final : public ZeroStrategy {
 public:
  Zero1Strategy() : ZeroStrategy(1) {}
};

class Zero2Strategy final : public ZeroStrategy {
 public:
  Zero2Strategy() : ZeroStrategy(2) {}
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ZERO_STRATEGY_H_
