#include "worker/strategies/sharded/sharded_optimizer.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "core/checkpoint.h"
#include "core/step_floats.h"
#include "worker/strategies/sharded/sharded_checkpoint.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/allreduce/local_optimizer.h"

namespace ringside {

namespace {

absl::Status CudaCheckpointsRefused() {
  return absl::UnimplementedError(
      "checkpoint/resume of CUDA workers' sharded optimizer state is not "
      "supported yet; use --device=cpu");
}

}  // namespace

int64_t ShardedPhaseBytes(int64_t bytes, int world_size) {
  return bytes * (world_size - 1) / world_size;
}

int64_t PipelinedRingCriticalBytes(absl::Span<const int64_t> counts,
                                   int64_t piece_floats) {
  if (counts.size() < 2) return 0;
  const int64_t n = static_cast<int64_t>(counts.size());
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const int64_t largest = *std::max_element(counts.begin(), counts.end());
  const int64_t smallest = *std::min_element(counts.begin(), counts.end());
  const int64_t pipeline = largest + (n - 2) * std::min(largest, piece_floats);
  return std::max(total - smallest, pipeline) * 4;
}

void RecordWholeBufferSpans(const SyncContext& context, const char* phase,
                            double start_s, double end_s, int64_t step) {
  Timeline* timeline = context.options.timeline;
  if (timeline == nullptr) return;
  for (int t = 0; t < context.layout.num_tensors(); ++t) {
    const TensorSpec& spec = context.layout.tensor(t);
    timeline->Span(spec.name, phase, start_s, end_s,
                   {{"step", step}, {"bytes", spec.size * 4}});
  }
}

absl::StatusOr<ShardedStart> StartSharded(const SyncContext& context,
                                          const std::string& name,
                                          ShardPlan plan) {
  ShardedStart start;
  RS_ASSIGN_OR_RETURN(start.collective,
                      ConnectCollective(context, name, &start.own_store));
  RS_RETURN_IF_ERROR(Annotate(
      start.collective->Broadcast(context.params, 0,
                                  context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(start.optimizer,
                      ShardedOptimizer::Create(context, start.collective.get(),
                                               std::move(plan)));
  RS_ASSIGN_OR_RETURN(start.start_step, start.optimizer->Resume());
  return start;
}

absl::StatusOr<std::unique_ptr<ShardedOptimizer>> ShardedOptimizer::Create(
    const SyncContext& context, Collective* collective, ShardPlan plan) {
  std::unique_ptr<ShardedOptimizer> s(new ShardedOptimizer(
      context, collective,
      TensorShards(context.layout, std::move(plan), context.rank)));
  const int64_t owned = s->shards_.owned_elements();
  if (context.device == Device::kCuda) {
    RS_ASSIGN_OR_RETURN(
        s->device_optimizer_,
        CudaOptimizer::Create(context.optimizer, owned, context.cuda_device));
    RS_ASSIGN_OR_RETURN(s->start_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    RS_ASSIGN_OR_RETURN(s->stop_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    return s;
  }
  RS_ASSIGN_OR_RETURN(s->optimizer_,
                      Optimizer::Create(context.optimizer, owned));
  return s;
}

int64_t ShardedOptimizer::state_bytes() const {
  return device_optimizer_ != nullptr ? device_optimizer_->state_bytes()
                                      : optimizer_->state_bytes();
}

absl::StatusOr<StepStats> ShardedOptimizer::Step(int64_t step) {
  const double start = NowSeconds();
  StepStats stats;
  const std::vector<KeyRange>& pieces = shards_.pieces();
  if (device_optimizer_ != nullptr) {
    // Final on return: the all-gather that follows reads the updated pieces.
    RS_ASSIGN_OR_RETURN(
        stats.local_optimizer_s,
        ApplyOnDeviceTimed(*device_optimizer_, context_.params.data(),
                           context_.grads.data(), pieces, step + 1,
                           context_.compute_stream, start_.get(), stop_.get()));
  } else {
    int64_t state_offset = 0;
    for (const KeyRange& p : pieces) {
      optimizer_->Apply(state_offset,
                        context_.params.subspan(p.begin, p.size()),
                        context_.grads.subspan(p.begin, p.size()), step + 1);
      state_offset += p.size();
    }
    stats.local_optimizer_s = NowSeconds() - start;
  }
  RecordSpan(context_.options.timeline, "step", "OPTIMIZER", start,
             NowSeconds(),
             {{"step", step}, {"elements", shards_.owned_elements()}});
  return stats;
}

absl::StatusOr<StepStats> ShardedOptimizer::GatherParams(
    const std::string& what) {
  StepStats stats;
  const ShardPlan& plan = shards_.plan();
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const KeyRange& unit = plan.units[u];
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllGatherV(context_.params.subspan(unit.begin, unit.size()),
                                plan.counts[u], context_.options.rpc_timeout),
        what));
    stats.ring_critical_bytes += PipelinedRingCriticalBytes(
        plan.counts[u], RingPieceFloats(plan.counts[u]));
  }
  stats.bytes_sent = stats.bytes_received =
      ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  return stats;
}

absl::StatusOr<StepStats> ShardedOptimizer::StepAndGather(int64_t step) {
  RS_ASSIGN_OR_RETURN(StepStats stats, Step(step));
  const double applied = NowSeconds();
  RS_ASSIGN_OR_RETURN(
      StepStats gathered,
      GatherParams(
          absl::StrCat("all-gather of the parameters after step ", step)));
  RecordWholeBufferSpans(context_, "ALLGATHER", applied, NowSeconds(), step);
  stats.bytes_sent = gathered.bytes_sent;
  stats.bytes_received = gathered.bytes_received;
  stats.ring_critical_bytes = gathered.ring_critical_bytes;
  return stats;
}

absl::Status ShardedOptimizer::MaybeCheckpoint(int64_t step) {
  if (!context_.options.CheckpointDue(step)) return absl::OkStatus();
  if (device_optimizer_ != nullptr) return CudaCheckpointsRefused();
  ScopedSpan span(context_.options.timeline, "step", "CHECKPOINT",
                  {{"step", step + 1}});
  Checkpoint c;
  c.step = step + 1;
  c.shard = context_.rank;
  c.num_shards = context_.world_size;
  c.pieces = shards_.pieces();
  c.layout = context_.layout;
  c.optimizer = context_.optimizer;
  c.writer = absl::StrCat("worker rank ", context_.rank, " of ",
                          context_.world_size, " (sharded optimizer)");
  c.params.reserve(shards_.owned_elements());
  for (const KeyRange& p : shards_.pieces()) {
    c.params.insert(c.params.end(), context_.params.begin() + p.begin,
                    context_.params.begin() + p.end);
  }
  c.optimizer_state = ExportOptimizerState(*optimizer_);
  return Annotate(
      WriteCheckpointFile(
          ShardCheckpointPath(context_.options.checkpoint_dir, context_.rank,
                              context_.world_size),
          c),
      absl::StrCat("checkpoint of shard ", context_.rank, " after step ",
                   step));
}

absl::StatusOr<int64_t> ShardedOptimizer::Resume() {
  if (device_optimizer_ != nullptr &&
      (context_.options.resume || context_.options.checkpoint_every > 0)) {
    return CudaCheckpointsRefused();
  }
  if (!context_.options.resume) return 0;
  const std::string& dir = context_.options.checkpoint_dir;
  int64_t step = 0;
  absl::Status loaded = [&]() -> absl::Status {
    RS_ASSIGN_OR_RETURN(ShardFileSet set,
                        FindNewestShardSet(dir, context_.world_size));
    if (set.num_shards != context_.world_size && context_.rank == 0) {
      LOG(INFO) << "resharding the checkpoint of " << set.num_shards
                << " ranks after step " << set.step << " onto "
                << context_.world_size << " ranks";
    }
    RS_RETURN_IF_ERROR(LoadShardPieces(
        dir, set, context_.layout, context_.optimizer, shards_.pieces(),
        context_.rank % set.num_shards, context_.params,
        optimizer_->StateBuffers()));
    step = set.step;
    return absl::OkStatus();
  }();
  // Every rank learns every rank's step (high float -1: failed to load).
  const int n = context_.world_size;
  std::vector<float> steps(2 * n, 0.0f);
  std::tie(steps[2 * context_.rank], steps[2 * context_.rank + 1]) =
      loaded.ok() ? StepAsFloats(step) : std::pair<float, float>{-1.0f, 0.0f};
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllGatherV(absl::MakeSpan(steps),
                              std::vector<int64_t>(n, 2),
                              context_.options.rpc_timeout),
      "exchanging the checkpoints' steps"));
  if (!loaded.ok()) return loaded;
  for (int r = 0; r < n; ++r) {
    if (steps[2 * r] < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", r, " could not load its shard's checkpoint (see its log)"));
    }
    const int64_t theirs = StepFromFloats(steps[2 * r], steps[2 * r + 1]);
    if (theirs != step) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the ranks found checkpoints of different steps: rank ",
          context_.rank, " has step ", step, ", rank ", r, " step ", theirs,
          " (a run writing them at the same time?)"));
    }
  }
  RS_RETURN_IF_ERROR(
      GatherParams("all-gathering the checkpoint's parameters").status());
  return step;
}

}  // namespace ringside
