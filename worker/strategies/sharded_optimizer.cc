#include "worker/strategies/sharded_optimizer.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "server/partitioner.h"

namespace ringside {

int64_t ShardedPhaseBytes(int64_t bytes, int world_size) {
  return bytes * (world_size - 1) / world_size;
}

absl::StatusOr<std::unique_ptr<ShardedOptimizer>> ShardedOptimizer::Create(
    const SyncContext& context, Collective* collective) {
  std::unique_ptr<ShardedOptimizer> s(new ShardedOptimizer(context, collective));
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Partitioner> partitioner,
                      MakePartitioner("even_bytes"));
  RS_ASSIGN_OR_RETURN(std::vector<KeyRange> ranges,
                      partitioner->Partition(context.layout, context.world_size));
  for (const KeyRange& r : ranges) s->counts_.push_back(r.size());
  s->shard_ = ranges[context.rank];
  RS_ASSIGN_OR_RETURN(s->optimizer_,
                      Optimizer::Create(context.optimizer, s->shard_.size()));
  return s;
}

absl::StatusOr<StepStats> ShardedOptimizer::StepAndGather(int64_t step) {
  Timeline* timeline = context_.options.timeline;
  const double start = NowSeconds();
  optimizer_->Apply(0, context_.params.subspan(shard_.begin, shard_.size()),
                    context_.grads.subspan(shard_.begin, shard_.size()),
                    step + 1);
  const double applied = NowSeconds();
  RecordSpan(timeline, "step", "OPTIMIZER", start, applied,
             {{"step", step}, {"elements", shard_.size()}});
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllGatherV(context_.params, counts_,
                              context_.options.rpc_timeout),
      absl::StrCat("all-gather of the parameters after step ", step)));
  RecordSpan(timeline, "step", "ALLGATHER", applied, NowSeconds(),
             {{"step", step}, {"bytes", context_.layout.total_bytes()}});
  StepStats stats;
  stats.local_optimizer_s = applied - start;
  stats.bytes_sent = stats.bytes_received =
      ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  return stats;
}

}  // namespace ringside
