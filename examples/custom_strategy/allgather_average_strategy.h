// AllGatherAverageStrategy ("allgather_average"): an example of a strategy
// built outside ringside's tree, against its public targets only
// (//worker:sync_strategy, //worker/strategies/allreduce:job_collective,
// //worker/strategies/allreduce:local_optimizer, //collectives:collective).
// After backward every rank all-gathers every rank's whole gradient and
// averages the N copies in rank order, then
// applies the optimizer locally — the naive all-reduce a ring replaces:
// N·M bytes received per step instead of 2(N−1)/N·M. Exact to float32
// rounding (the equivalence oracle holds at ring's tolerance); CPU only;
// nothing overlaps with backward; checkpoints as ring's (LocalOptimizer).
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_EXAMPLES_CUSTOM_STRATEGY_ALLGATHER_AVERAGE_STRATEGY_H_
#define RINGSIDE_EXAMPLES_CUSTOM_STRATEGY_ALLGATHER_AVERAGE_STRATEGY_H_

#include <memory>
#include <string>
#include <vector>

#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside_example {

class AllGatherAverageStrategy final : public ringside::SyncStrategy {
 public:
  std::string name() const override { return "allgather_average"; }
  absl::Status Init(const ringside::SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<ringside::StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  ringside::SyncContext context_;
  std::unique_ptr<ringside::InMemoryStore> own_store_;  // one worker only
  std::unique_ptr<ringside::Collective> collective_;
  std::unique_ptr<ringside::LocalOptimizer> optimizer_;
  std::vector<float> gathered_;  // N copies of the gradient, rank order
  int64_t start_step_ = 0;
};

}  // namespace ringside_example

#endif  // RINGSIDE_EXAMPLES_CUSTOM_STRATEGY_ALLGATHER_AVERAGE_STRATEGY_H_
