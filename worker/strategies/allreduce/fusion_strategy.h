// FusionStrategy ("fusion"): Horovod-style tensor fusion. Init connects two
// CPU collectives through the job's store (one for negotiation, one for
// gradients), broadcasts rank 0's initial parameters and starts a
// FusionRuntime (collectives/fusion/fusion_runtime.h) over the gradient
// buffer. During backward each tensor is handed to the runtime as soon as it
// is final; its background cycle agrees with rank 0 which tensors are ready
// everywhere and all-reduces (averages) them in fused batches while the
// model computes earlier layers. FinishStep waits for every tensor, then
// each worker applies the optimizer locally (bit-identical parameters on
// every rank). Knobs: SyncOptions::fusion (--cycle_time_ms,
// --fusion_threshold_bytes, --stall_warning_s, --response_cache_capacity).
// CUDA workers: negotiation stays on the CPU (Gloo) collective; gradients
// are reduced by NCCL on the device buffer (one GPU per rank), a tensor is
// submitted once its ready event has completed, the fusion buffer is device
// memory (DeviceFusionMemory), and the optimizer runs on the device.
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FUSION_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FUSION_STRATEGY_H_

#include <memory>

#include "collectives/collective.h"
#include "collectives/fusion/fusion_memory.h"
#include "collectives/fusion/fusion_runtime.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class FusionStrategy : public SyncStrategy {
 public:
  ~FusionStrategy() override;
  std::string name() const override { return "fusion"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  absl::Status Shutdown() override;
  bool SupportsDevice(Device) const override { return true; }

  // The runtime's counters (cycles, cache hits, fused batches, ...).
  FusionStats stats() const;

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> control_;
  std::unique_ptr<Collective> data_;
  std::unique_ptr<Collective> overlap_data_;  // the second lane (CPU)
  std::unique_ptr<FusionMemory> memory_;    // CUDA only
  std::unique_ptr<FusionRuntime> runtime_;  // destroyed before the above
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from a checkpoint
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FUSION_STRATEGY_H_
