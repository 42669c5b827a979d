#include "worker/strategies/zero_strategy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

std::string ZeroStrategy::name() const { return absl::StrCat("zero", stage_); }

absl::Status ZeroStrategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(ShardedStart start, StartSharded(context_, name()));
  own_store_ = std::move(start.own_store);
  collective_ = std::move(start.collective);
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  return absl::OkStatus();
}

absl::StatusOr<StepStats> ZeroStrategy::FinishStep(int64_t step) {
  const double start = NowSeconds();
  const absl::Duration timeout = context_.options.rpc_timeout;
  // Stage 1 moves 2(n-1)/n of the buffer each way for the gradients, stage
  // 2 (n-1)/n; the all-gather adds (n-1)/n (StepAndGather's stats).
  const int64_t phase =
      ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  const int64_t gradient_bytes = stage_ == 1 ? 2 * phase : phase;
  // CUDA: every gradient final before the NCCL group's stream reads them.
  for (int t = 0; t < context_.layout.num_tensors(); ++t) {
    RS_RETURN_IF_ERROR(WaitForGradient(context_, t));
  }
  RS_RETURN_IF_ERROR(Annotate(
      stage_ == 1 ? collective_->AllReduce(context_.grads, ReduceOp::kAverage,
                                           timeout)
                  : collective_->ReduceScatter(context_.grads,
                                               optimizer_->counts(),
                                               ReduceOp::kAverage, timeout),
      absl::StrCat(stage_ == 1 ? "all-reduce" : "reduce-scatter",
                   " of the gradients of step ", step)));
  RecordWholeBufferSpans(context_, stage_ == 1 ? "ALLREDUCE" : "REDUCE_SCATTER",
                         start, NowSeconds(), step);
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->StepAndGather(step));
  RS_RETURN_IF_ERROR(optimizer_->MaybeCheckpoint(step));
  stats.bytes_sent += gradient_bytes;
  stats.bytes_received += gradient_bytes;
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero1Strategy,
    StrategyInfo("zero1", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 1: all-reduce the gradients, each rank steps "
                  "the optimizer on its byte-balanced shard only (1/N of the "
                  "optimizer state), all-gather the parameters (Gloo on CPU, NCCL "
                  "on CUDA)")
        .Display("ZeRO-1")
        .StudyOrder(8)
        .ModelledAs("zero1")
        .Options({"allreduce_algorithm", "checkpoint_every", "resume"}));

RINGSIDE_REGISTER_STRATEGY(
    Zero2Strategy,
    StrategyInfo("zero2", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 2: reduce-scatter the gradients (each rank "
                  "keeps its shard's), step the optimizer on that shard only, "
                  "all-gather the parameters (Gloo on CPU, NCCL on CUDA)")
        .Display("ZeRO-2")
        .StudyOrder(9)
        .ModelledAs("zero2")
        .Options({"checkpoint_every", "resume"}));

}  // namespace ringside
