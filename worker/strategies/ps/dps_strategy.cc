#include "worker/strategies/ps/dps_strategy.h"

#include "common/status_macros.h"

namespace ringside {

absl::Status DpsStrategy::Init(const SyncContext& context) {
  RS_ASSIGN_OR_RETURN(session_,
                      PsSession::Start(context, context.options.overlap));
  return absl::OkStatus();
}

void DpsStrategy::OnGradientReady(int tensor_index) {
  session_->OnGradientReady(tensor_index);
}

absl::StatusOr<StepStats> DpsStrategy::FinishStep(int64_t step) {
  return session_->FinishStep(step);
}

absl::Status DpsStrategy::Shutdown() { return session_->Shutdown(); }

RINGSIDE_REGISTER_STRATEGY(
    DpsStrategy,
    StrategyInfo("dps", ServerNeed::kSharded)
        .Describe("sharded parameter servers, push/pull overlapped with "
                  "backward")
        .Display("DPS")
        .StudyOrder(2)
        .ModelledAs("dps")
        .Options({"chunk_kb", "ps_transport", "overlap", "checkpoint_every",
                  "resume"}));

}  // namespace ringside
