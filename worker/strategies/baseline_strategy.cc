#include "worker/strategies/baseline_strategy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/strategies/allreduce/local_optimizer.h"

namespace ringside {

absl::Status BaselineStrategy::Init(const SyncContext& context) {
  if (context.world_size != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "baseline runs one worker; got world_size=", context.world_size));
  }
  context_ = context;
  RS_ASSIGN_OR_RETURN(LocalStart start, StartLocal(context_, nullptr));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  return absl::OkStatus();
}

absl::StatusOr<StepStats> BaselineStrategy::FinishStep(int64_t step) {
  // One worker: nothing to average, no bytes moved.
  return optimizer_->Step(step);
}

RINGSIDE_REGISTER_STRATEGY(BaselineStrategy,
                           StrategyInfo("baseline", ServerNeed::kNone)
                               .Describe("one worker, no synchronization")
                               .Display("Baseline")
                               .StudyOrder(0)
                               .ModelledAs("baseline")
                               .Options({"checkpoint_every", "resume"}));

}  // namespace ringside
