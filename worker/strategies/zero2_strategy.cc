#include "worker/strategies/zero2_strategy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

absl::Status Zero2Strategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCpuCollective(context, "zero2", &own_store_));
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(context.params, 0, context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(optimizer_,
                      ShardedOptimizer::Create(context_, collective_.get()));
  return absl::OkStatus();
}

absl::StatusOr<StepStats> Zero2Strategy::FinishStep(int64_t step) {
  const double start = NowSeconds();
  RS_RETURN_IF_ERROR(Annotate(
      collective_->ReduceScatter(context_.grads, optimizer_->counts(),
                                  ReduceOp::kAverage,
                                  context_.options.rpc_timeout),
      absl::StrCat("ReduceScatter of the gradients of step ", step)));
  RecordSpan(context_.options.timeline, "step", "REDUCE_SCATTER", start, NowSeconds(),
             {{"step", step}, {"bytes", context_.layout.total_bytes()}});
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->StepAndGather(step));
  const int64_t gradient_bytes =
      ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  stats.bytes_sent += gradient_bytes;
  stats.bytes_received += gradient_bytes;
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero2Strategy,
    StrategyInfo("zero2", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 2: reduce-scatter the gradients (each rank keeps its shard's), step the optimizer on that shard only, all-gather the parameters (Gloo on CPU)")
        .Display("ZeRO-2")
        .StudyOrder(9)
        .ModelledAs("ring"));

}  // namespace ringside
