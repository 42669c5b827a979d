// ZeroStrategy: ZeRO stages 1 and 2 (Rajbhandari et al., SC'20) over the
// job's Gloo group (NCCL on CUDA workers), registered as "zero1"
// (Zero1Strategy) and "zero2" (Zero2Strategy). Init connects the
// collective through the job's store, broadcasts rank 0's initial
// parameters and makes this rank's ShardedOptimizer
// (worker/strategies/sharded/sharded_optimizer.h: optimizer state for its
// pieces only; stage 1 cuts the buffer into byte-balanced shards, stage 2
// cuts each bucket evenly, or, with --zero_layout=contiguous, as stage 1).
//   stage 1  FinishStep all-reduces (averages) the whole gradient buffer
//            once backward has ended;
//   stage 2  the gradients are reduce-scattered (averaged) in DDP's
//            buckets of adjacent tensors (ring's --ring_first_bucket_kb,
//            --ring_bucket_kb; worker/strategies/allreduce/gradient_buckets.h) on a
//            communication thread as soon as backward completes each
//            bucket, so the reduction overlaps the rest of backward, and
//            on CPU workers the part outside this rank's pieces is given
//            back to the OS once reduced (TensorShards): a rank holds its
//            pieces of the gradients plus those not yet reduced
//            (PeakGradBytes); FinishStep waits for them.
// Then both step the optimizer on this rank's pieces and all-gather the
// parameters unit by unit: every rank ends bit-identical. CUDA workers run on their
// device buffers (NCCL; the shard's optimizer on the device; no checkpoints
// there). The CUDA path has run at one worker on an H100 and an H200
// (tools/gpu_check.sh, docs/GPU_RESULTS.md), never at two or more.
// Checkpoints: every rank writes its own pieces
// (ShardedOptimizer::MaybeCheckpoint); --resume reshards a checkpoint of
// any number of workers and either layout. Every wait is bounded by
// options.rpc_timeout.
// Timeline (SyncOptions::timeline, when set): ALLREDUCE (stage 1, one
// collective over the whole buffer, shown on every tensor's lane) or
// REDUCE_SCATTER (stage 2, per tensor), then the ShardedOptimizer's
// OPTIMIZER and ALLGATHER.
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/allreduce/gradient_buckets.h"
#include "worker/strategies/comm/sequenced_comm_thread.h"
#include "worker/strategies/sharded/sharded_gradients.h"
#include "worker/strategies/sharded/sharded_optimizer.h"
#include "worker/strategies/sharded/tensor_shards.h"
#include "worker/sync_strategy.h"

namespace ringside {

class ZeroStrategy : public SyncStrategy {
 public:
  std::string name() const override;
  absl::Status Init(const SyncContext& context) override;
  ~ZeroStrategy() override;
  void OnGradientReady(int tensor) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  int64_t PeakGradBytes() const override {
    return gradients_ == nullptr ? -1 : gradients_->peak_bytes();
  }
  int64_t start_step() const override { return sharded_.start_step; }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu || device == Device::kCuda;
  }
  int64_t OptimizerStateBytes() const override {
    return sharded_.optimizer == nullptr ? 0
                                         : sharded_.optimizer->state_bytes();
  }
  // Stage 2: its reduce-scatter buckets' caps (ring's); stage 1: none.
  nlohmann::json RecordFields() const override;

 protected:
  explicit ZeroStrategy(int stage) : stage_(stage) {}

 private:
  const int stage_;  // 1 or 2
  SyncContext context_;
  ShardedStart sharded_;  // the group, the optimizer, the step to start at
  // Stage 2: DDP's buckets and how many of each bucket's tensors are ready
  // this step, the thread that reduce-scatters them and the gradients it
  // reduces.
  std::vector<GradientBucket> buckets_;
  std::vector<int> bucket_of_;     // per tensor
  std::vector<int> bucket_ready_;  // per bucket
  std::unique_ptr<SequencedCommThread> comm_;
  std::unique_ptr<ShardedGradients> gradients_;
  int64_t step_ = 0;
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

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_STRATEGY_H_
