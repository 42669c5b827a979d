#include "worker/strategies/zero1_strategy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

absl::Status Zero1Strategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCpuCollective(context, "zero1", &own_store_));
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(context.params, 0, context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(optimizer_,
                      ShardedOptimizer::Create(context_, collective_.get()));
  return absl::OkStatus();
}

absl::StatusOr<StepStats> Zero1Strategy::FinishStep(int64_t step) {
  const double start = NowSeconds();
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllReduce(context_.grads, ReduceOp::kAverage,
                              context_.options.rpc_timeout),
      absl::StrCat("AllReduce of the gradients of step ", step)));
  RecordSpan(context_.options.timeline, "step", "ALLREDUCE", start, NowSeconds(),
             {{"step", step}, {"bytes", context_.layout.total_bytes()}});
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->StepAndGather(step));
  const int64_t gradient_bytes =
      2 * ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  stats.bytes_sent += gradient_bytes;
  stats.bytes_received += gradient_bytes;
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero1Strategy,
    StrategyInfo("zero1", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 1: all-reduce the gradients, each rank steps the optimizer on its byte-balanced shard only (1/N of the optimizer state), all-gather the parameters (Gloo on CPU)")
        .Display("ZeRO-1")
        .StudyOrder(8)
        .ModelledAs("ring", /*wire_bytes=*/1.5)
        .Options({"allreduce_algorithm"}));

}  // namespace ringside
