// BaselineStrategy ("baseline"): one worker, no synchronization; the worker
// applies the optimizer to its own gradient. The reference every other
// strategy is compared against. CUDA workers: the optimizer runs on the
// device (CudaOptimizer on the compute stream). Not thread-safe
// (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_BASELINE_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_BASELINE_STRATEGY_H_

#include <memory>

#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class BaselineStrategy : public SyncStrategy {
 public:
  std::string name() const override { return "baseline"; }
  // INVALID_ARGUMENT if world_size != 1.
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  bool SupportsDevice(Device) const override { return true; }

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  SyncContext context_;
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from a checkpoint
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_BASELINE_STRATEGY_H_
