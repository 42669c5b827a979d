#include "examples/custom_strategy/allgather_average_strategy.h"

#include <utility>

#include "common/status_macros.h"
#include "worker/strategies/allreduce/job_collective.h"

namespace ringside_example {

using ringside::Annotate;

absl::Status AllGatherAverageStrategy::Init(
    const ringside::SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ringside::ConnectCpuCollective(
                          context, "allgather_average", &own_store_));
  RS_ASSIGN_OR_RETURN(ringside::LocalStart start,
                      ringside::StartLocal(context_, collective_.get()));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  gathered_.assign(context.grads.size() * context.world_size, 0.0f);
  return absl::OkStatus();
}

absl::StatusOr<ringside::StepStats> AllGatherAverageStrategy::FinishStep(
    int64_t step) {
  const size_t m = context_.grads.size();
  RS_RETURN_IF_ERROR(
      Annotate(collective_->AllGather(context_.grads,
                                      absl::MakeSpan(gathered_),
                                      context_.options.rpc_timeout),
               "all-gather of the gradients"));
  const int n = context_.world_size;
  const float scale = 1.0f / static_cast<float>(n);
  for (size_t i = 0; i < m; ++i) {
    float sum = 0.0f;
    for (int r = 0; r < n; ++r) sum += gathered_[r * m + i];
    context_.grads[i] = sum * scale;
  }
  RS_ASSIGN_OR_RETURN(ringside::StepStats stats, optimizer_->Step(step));
  // What an all-gather moves: this rank's copy to the N−1 others, theirs in.
  stats.bytes_sent = stats.bytes_received =
      static_cast<int64_t>(m) * 4 * (n - 1);
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    AllGatherAverageStrategy,
    ringside::StrategyInfo("allgather_average", ringside::ServerNeed::kNone)
        .Store()
        .Describe("example built outside the tree: all-gather every rank's "
                  "gradient, average the copies in rank order")
        .Display("AllGather avg")
        .StudyOrder(50)
        .ModelledAs("allgather_average")  // allgather_average_formula.cc
        .Options({"checkpoint_every", "resume"}));

}  // namespace ringside_example
