#include "worker/strategies/ps/sps_strategy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {

absl::Status SpsStrategy::Init(const SyncContext& context) {
  if (context.options.servers.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sps uses exactly one parameter server; got ",
        context.options.servers.size(), " in --servers (use dps for more)"));
  }
  RS_ASSIGN_OR_RETURN(session_, PsSession::Start(context, /*overlap=*/false));
  return absl::OkStatus();
}

absl::StatusOr<StepStats> SpsStrategy::FinishStep(int64_t step) {
  return session_->FinishStep(step);
}

absl::Status SpsStrategy::Shutdown() { return session_->Shutdown(); }

RINGSIDE_REGISTER_STRATEGY(SpsStrategy,
                           StrategyInfo("sps", ServerNeed::kOne)
                               .Describe("single parameter server over gRPC")
                               .Display("SPS")
                               .StudyOrder(1)
                               .ModelledAs("sps")
                               .Options({"chunk_kb", "ps_transport",
                                         "checkpoint_every", "resume"}));

}  // namespace ringside
