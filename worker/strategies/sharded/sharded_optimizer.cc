#include "worker/strategies/sharded/sharded_optimizer.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "core/checkpoint.h"
#include "server/partitioner.h"
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
                                          const std::string& name) {
  ShardedStart start;
  RS_ASSIGN_OR_RETURN(start.collective,
                      ConnectCollective(context, name, &start.own_store));
  RS_RETURN_IF_ERROR(Annotate(
      start.collective->Broadcast(context.params, 0,
                                  context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(start.optimizer,
                      ShardedOptimizer::Create(context, start.collective.get()));
  RS_ASSIGN_OR_RETURN(start.start_step, start.optimizer->Resume());
  return start;
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
  if (context.device == Device::kCuda) {
    RS_ASSIGN_OR_RETURN(s->device_optimizer_,
                        CudaOptimizer::Create(context.optimizer,
                                              s->shard_.size(),
                                              context.cuda_device));
    RS_ASSIGN_OR_RETURN(s->start_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    RS_ASSIGN_OR_RETURN(s->stop_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    return s;
  }
  RS_ASSIGN_OR_RETURN(s->optimizer_,
                      Optimizer::Create(context.optimizer, s->shard_.size()));
  return s;
}

int64_t ShardedOptimizer::state_bytes() const {
  return device_optimizer_ != nullptr ? device_optimizer_->state_bytes()
                                      : optimizer_->state_bytes();
}

absl::StatusOr<StepStats> ShardedOptimizer::Step(int64_t step) {
  const double start = NowSeconds();
  StepStats stats;
  if (device_optimizer_ != nullptr) {
    // Final on return: the all-gather that follows reads the updated shard.
    RS_ASSIGN_OR_RETURN(
        stats.local_optimizer_s,
        ApplyOnDeviceTimed(*device_optimizer_,
                           context_.params.data() + shard_.begin,
                           context_.grads.data() + shard_.begin,
                           shard_.size(), step + 1, context_.compute_stream,
                           start_.get(), stop_.get()));
  } else {
    optimizer_->Apply(0, context_.params.subspan(shard_.begin, shard_.size()),
                      context_.grads.subspan(shard_.begin, shard_.size()),
                      step + 1);
    stats.local_optimizer_s = NowSeconds() - start;
  }
  RecordSpan(context_.options.timeline, "step", "OPTIMIZER", start,
             NowSeconds(), {{"step", step}, {"elements", shard_.size()}});
  return stats;
}

absl::StatusOr<StepStats> ShardedOptimizer::StepAndGather(int64_t step) {
  RS_ASSIGN_OR_RETURN(StepStats stats, Step(step));
  const double applied = NowSeconds();
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllGatherV(context_.params, counts_,
                              context_.options.rpc_timeout),
      absl::StrCat("all-gather of the parameters after step ", step)));
  RecordWholeBufferSpans(context_, "ALLGATHER", applied, NowSeconds(), step);
  stats.bytes_sent = stats.bytes_received =
      ShardedPhaseBytes(context_.layout.total_bytes(), context_.world_size);
  stats.ring_critical_bytes =
      PipelinedRingCriticalBytes(counts_, RingPieceFloats(counts_));
  return stats;
}

absl::Status ShardedOptimizer::MaybeCheckpoint(int64_t step) {
  const int64_t every = context_.options.checkpoint_every;
  if (every <= 0 || (step + 1) % every != 0) return absl::OkStatus();
  if (device_optimizer_ != nullptr) return CudaCheckpointsRefused();
  ScopedSpan span(context_.options.timeline, "step", "CHECKPOINT",
                  {{"step", step + 1}});
  Checkpoint c;
  c.step = step + 1;
  c.shard = context_.rank;
  c.num_shards = context_.world_size;
  c.range = shard_;
  c.layout = context_.layout;
  c.optimizer = context_.optimizer;
  c.writer = absl::StrCat("worker rank ", context_.rank, " of ",
                          context_.world_size, " (sharded optimizer)");
  const absl::Span<const float> mine =
      context_.params.subspan(shard_.begin, shard_.size());
  c.params.assign(mine.begin(), mine.end());
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
  const std::string path = ShardCheckpointPath(
      context_.options.checkpoint_dir, context_.rank, context_.world_size);
  int64_t step = 0;
  absl::Status loaded = [&]() -> absl::Status {
    absl::StatusOr<Checkpoint> c = ReadCheckpointFile(path);
    if (absl::IsNotFound(c.status())) {
      return absl::NotFoundError(absl::StrCat(
          "no checkpoint of shard ", context_.rank, " of ",
          context_.world_size, " at ", path,
          " (a checkpoint written by another number of workers does not "
          "resume here): ",
          c.status().message()));
    }
    RS_RETURN_IF_ERROR(c.status());
    RS_RETURN_IF_ERROR(CheckCheckpointMatches(*c, context_.layout,
                                              context_.optimizer, shard_));
    RS_RETURN_IF_ERROR(ImportOptimizerState(*optimizer_, c->optimizer_state));
    std::copy(c->params.begin(), c->params.end(),
              context_.params.begin() + shard_.begin);
    step = c->step;
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
          "the shards' checkpoints are of different steps: rank ",
          context_.rank, " has step ", step, ", rank ", r, " step ", theirs,
          " (a run stopped while writing them?)"));
    }
  }
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllGatherV(context_.params, counts_,
                              context_.options.rpc_timeout),
      "all-gathering the checkpoint's parameters"));
  return step;
}

}  // namespace ringside
