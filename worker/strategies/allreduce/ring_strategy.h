// RingStrategy ("ring"): ring all-reduce of the gradients in buckets of
// adjacent tensors (worker/strategies/allreduce/gradient_buckets.h: PyTorch DDP's scheme
// and default sizes, 1 MiB first, then 25 MiB; --ring_bucket_kb=0 reduces each
// tensor alone) — Gloo on CPU workers, NCCL on CUDA workers (device
// buffers; the communication thread waits for each tensor's ready event on
// the host, then NCCL reduces on its own stream while backward goes on; one
// GPU per rank). Init connects the collective through the job's store and
// broadcasts rank 0's initial parameters. During backward, a bucket is
// queued as soon as its last tensor is final and a communication thread
// all-reduces (averages) it in place in the flat gradient buffer while the
// model computes the earlier layers; FinishStep waits for every bucket and
// then every worker applies the optimizer locally, so all ranks hold
// bit-identical parameters.
// How a bucket is averaged is its BucketCommHook (bucket_comm_hook.h):
// "ring" all-reduces float32; strategies built on ring with another hook
// (ring_fp16: half_compression_hook.h) keep everything else of ring's,
// checkpoints included, under their own name and store prefix; a hook
// with state across steps (error feedback) has every rank write it beside
// rank 0's checkpoint, in a file of its own, and read it back on resume.
// Why buckets: every collective call costs a few wake-ups of the
// communication and transport threads; on a busy 2-core machine one
// per-tensor call of a 4 KiB bias took 3-4 ms, as long as a 4 MiB weight.
// Timeline (SyncOptions::timeline, when set): per tensor, on a lane named
// after it, QUEUE (OnGradientReady to the start of its bucket's
// all-reduce) and ALLREDUCE (its bucket's; args of both: step, bytes of the
// tensor, bucket_bytes); the local optimizer as OPTIMIZER on lane "step".
// With no timeline the clock is not read.
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_STRATEGY_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/allreduce/bucket_comm_hook.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/strategies/comm/bucket_comm_thread.h"
#include "worker/sync_strategy.h"

namespace ringside {

class RingStrategy : public SyncStrategy {
 public:
  RingStrategy() : RingStrategy("ring", MakeAllReduceHook()) {}
  ~RingStrategy() override;
  std::string name() const override { return name_; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  absl::Status Shutdown() override;
  bool SupportsDevice(Device device) const override {
    return hook_->SupportsDevice(device);
  }
  // Its hook's setting (BucketCommHook::Variant).
  std::string Variant() const override { return hook_->Variant(); }

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }
  // Its bucket caps.
  nlohmann::json RecordFields() const override {
    const auto& buckets =
        context_.options.strategy.Get<GradientBucketOptions>();
    return BucketCapsRecord(buckets.first_bucket_bytes, buckets.bucket_bytes);
  }

 protected:
  // Ring registered as `name` (also its store prefix) with `hook`.
  RingStrategy(std::string name, std::unique_ptr<BucketCommHook> hook)
      : name_(std::move(name)), hook_(std::move(hook)) {}
  // The optimizer the ranks apply, on `context` (the strategy's own copy);
  // called once in Init, before the collective connects (so a refusal
  // reaches every rank as itself) and the hook does. Default:
  // LocalOptimizer::Create(context), context.optimizer's rule.
  virtual absl::StatusOr<std::unique_ptr<LocalOptimizer>> MakeOptimizer(
      const SyncContext& context) {
    return LocalOptimizer::Create(context);
  }

 private:
  // Reduces `bucket` of `step` through the hook (communication thread).
  absl::Status ReduceBucket(const GradientBucket& bucket, int64_t step);
  // The buckets as the hook's state is laid out over them.
  std::vector<BucketSpan> BucketSpans() const;
  // Every rank, with rank 0's checkpoint after `step` (the same
  // --checkpoint_every): the hook's state, if it keeps one, in this rank's
  // RankStateCheckpointPath (core/checkpoint.h), beside this rank's
  // parameters.
  absl::Status MaybeWriteHookState(int64_t step);
  // With --resume, after the model's checkpoint was loaded (start_step_):
  // this rank's hook state from its file, which must be of the same step,
  // model, optimizer and number of ranks, and hold the parameters resumed.
  absl::Status ResumeHookState();

  const std::string name_;
  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<BucketCommHook> hook_;  // after collective_: uses it
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from a checkpoint
  std::unique_ptr<BucketCommThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_STRATEGY_H_
