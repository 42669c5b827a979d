// BaselineStrategy ("baseline"): one worker, no synchronization; the worker
// applies the optimizer to its own gradient. The reference every other
// strategy is compared against. Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_BASELINE_STRATEGY_H_
#define RINGSIDE_WORKER_BASELINE_STRATEGY_H_

#include <memory>

#include "models/optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class BaselineStrategy : public SyncStrategy {
 public:
  std::string name() const override { return "baseline"; }
  // INVALID_ARGUMENT if world_size != 1.
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;

 private:
  SyncContext context_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_BASELINE_STRATEGY_H_
