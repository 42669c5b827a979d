#include "worker/strategies/allreduce/local_optimizer.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "core/checkpoint.h"
#include "core/step_floats.h"
#include "device/cuda_event.h"
#include "models/cuda/cuda_optimizer.h"

namespace ringside {
namespace {

void FillStats(const SyncContext& context, double optimizer_s,
               StepStats* stats) {
  stats->local_optimizer_s = optimizer_s;
  const int w = context.world_size;
  stats->bytes_sent = stats->bytes_received =
      context.layout.total_bytes() * 2 * (w - 1) / w;
}

class HostLocalOptimizer final : public LocalOptimizer {
 public:
  HostLocalOptimizer(const SyncContext& context,
                     std::unique_ptr<Optimizer> optimizer)
      : context_(context), optimizer_(std::move(optimizer)) {}
  absl::StatusOr<StepStats> Step(int64_t step) override {
    StepStats stats = ApplyAveragedGradients(context_, *optimizer_, step);
    RS_RETURN_IF_ERROR(MaybeWriteCheckpoint(context_, *optimizer_, step));
    return stats;
  }
  absl::StatusOr<int64_t> Resume(const RootBroadcast& broadcast) override {
    return ResumeIfAsked(context_, broadcast, *optimizer_);
  }
  int64_t state_bytes() const override { return optimizer_->state_bytes(); }
  absl::StatusOr<std::vector<float>> ExportState() override {
    return ExportOptimizerState(*optimizer_);
  }
  absl::Status ImportState(absl::Span<const float> state) override {
    return ImportOptimizerState(*optimizer_, state);
  }

 private:
  const SyncContext& context_;
  std::unique_ptr<Optimizer> optimizer_;
};

// Apply on the compute stream between two timing events, then waits for
// the second: the next forward (same stream) sees the new parameters.
class CudaLocalOptimizer final : public LocalOptimizer {
 public:
  static absl::StatusOr<std::unique_ptr<LocalOptimizer>> Create(
      const SyncContext& context) {
    auto o = std::unique_ptr<CudaLocalOptimizer>(new CudaLocalOptimizer(context));
    RS_ASSIGN_OR_RETURN(
        o->optimizer_,
        CudaOptimizer::Create(context.optimizer,
                              context.layout.total_elements(),
                              context.cuda_device));
    RS_ASSIGN_OR_RETURN(o->start_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    RS_ASSIGN_OR_RETURN(o->stop_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    return std::unique_ptr<LocalOptimizer>(std::move(o));
  }

  absl::StatusOr<StepStats> Step(int64_t step) override {
    const double start = NowSeconds();
    RS_ASSIGN_OR_RETURN(
        const double device_s,
        ApplyOnDeviceTimed(
            *optimizer_, context_.params.data(), context_.grads.data(),
            {KeyRange{0, context_.layout.total_elements()}}, step + 1,
            context_.compute_stream, start_.get(), stop_.get()));
    RecordSpan(context_.options.timeline, "step", "OPTIMIZER", start,
               NowSeconds(), {{"step", step}});
    StepStats stats;
    FillStats(context_, device_s, &stats);
    return stats;
  }

  int64_t state_bytes() const override { return optimizer_->state_bytes(); }

  absl::StatusOr<std::vector<float>> ExportState() override {
    return Unsupported();
  }
  absl::Status ImportState(absl::Span<const float>) override {
    return Unsupported();
  }

  absl::StatusOr<int64_t> Resume(const RootBroadcast&) override {
    if (!context_.options.resume && context_.options.checkpoint_every == 0) {
      return 0;
    }
    return Unsupported();
  }

 private:
  static absl::Status Unsupported() {
    return absl::UnimplementedError(
        "checkpoint/resume of CUDA workers' local optimizer state is not "
        "supported yet; use a parameter-server strategy or --device=cpu");
  }

  explicit CudaLocalOptimizer(const SyncContext& context)
      : context_(context) {}
  const SyncContext& context_;
  std::unique_ptr<CudaOptimizer> optimizer_;
  OwnedCudaEvent start_, stop_;
};

}  // namespace

absl::StatusOr<double> ApplyOnDeviceTimed(CudaOptimizer& optimizer,
                                          float* params, const float* grads,
                                          absl::Span<const KeyRange> pieces,
                                          int64_t step, CudaStream stream,
                                          CudaEvent start, CudaEvent stop) {
  RS_RETURN_IF_ERROR(RecordEvent(start, stream));
  int64_t state_offset = 0;
  for (const KeyRange& p : pieces) {
    RS_RETURN_IF_ERROR(optimizer.Apply(state_offset, params + p.begin,
                                       grads + p.begin, p.size(), step,
                                       stream));
    state_offset += p.size();
  }
  RS_RETURN_IF_ERROR(RecordEvent(stop, stream));
  RS_RETURN_IF_ERROR(WaitForEvent(stop));
  return EventSeconds(start, stop);
}

namespace {

Checkpoint WholeModelCheckpoint(const SyncContext& context,
                                Optimizer& optimizer, int64_t step) {
  Checkpoint c;
  c.step = step;
  c.pieces = {KeyRange{0, context.layout.total_elements()}};
  c.layout = context.layout;
  c.optimizer = context.optimizer;
  c.writer = absl::StrCat("worker rank ", context.rank, " of ",
                          context.world_size);
  c.params.assign(context.params.begin(), context.params.end());
  c.optimizer_state = ExportOptimizerState(optimizer);
  return c;
}

}  // namespace

StepStats ApplyAveragedGradients(const SyncContext& context,
                                 Optimizer& optimizer, int64_t step) {
  const double start = NowSeconds();
  optimizer.Apply(0, context.params, context.grads, step + 1);
  const double end = NowSeconds();
  RecordSpan(context.options.timeline, "step", "OPTIMIZER", start, end,
             {{"step", step}});
  StepStats stats;
  FillStats(context, end - start, &stats);
  return stats;
}

absl::Status MaybeWriteCheckpoint(const SyncContext& context,
                                  Optimizer& optimizer, int64_t step) {
  if (context.rank != 0 || !context.options.CheckpointDue(step)) {
    return absl::OkStatus();
  }
  ScopedSpan span(context.options.timeline, "step", "CHECKPOINT",
                  {{"step", step + 1}});
  return Annotate(
      WriteCheckpointFile(
          AllReduceCheckpointPath(context.options.checkpoint_dir),
          WholeModelCheckpoint(context, optimizer, step + 1)),
      absl::StrCat("checkpoint after step ", step));
}

RootBroadcast BroadcastOver(Collective* collective) {
  return [collective](absl::Span<float> data, absl::Duration timeout) {
    if (collective == nullptr) return absl::OkStatus();
    return collective->Broadcast(data, 0, timeout);
  };
}

absl::StatusOr<int64_t> ResumeIfAsked(const SyncContext& context,
                                      const RootBroadcast& broadcast,
                                      Optimizer& optimizer) {
  if (!context.options.resume) return 0;
  const absl::Duration timeout = context.options.rpc_timeout;
  absl::Status loaded = absl::OkStatus();
  int64_t step = 0;
  if (context.rank == 0) {
    loaded = [&]() -> absl::Status {
      RS_ASSIGN_OR_RETURN(
          Checkpoint c,
          ReadCheckpointFile(
              AllReduceCheckpointPath(context.options.checkpoint_dir)));
      const KeyRange all{0, context.layout.total_elements()};
      RS_RETURN_IF_ERROR(CheckCheckpointMatches(c, context.layout,
                                                context.optimizer, all));
      RS_RETURN_IF_ERROR(ImportOptimizerState(optimizer, c.optimizer_state));
      std::copy(c.params.begin(), c.params.end(), context.params.begin());
      step = c.step;
      return absl::OkStatus();
    }();
  }
  if (context.world_size == 1) {
    if (!loaded.ok()) return loaded;
    return step;
  }
  const auto [high, low] = StepAsFloats(step);
  std::vector<float> header = {loaded.ok() ? 1.0f : 0.0f, high, low};
  RS_RETURN_IF_ERROR(Annotate(
      broadcast(absl::MakeSpan(header), timeout),
      "broadcasting the resume step"));
  if (!loaded.ok()) return loaded;
  if (header[0] != 1.0f) {
    return absl::FailedPreconditionError(
        "rank 0 could not load the checkpoint to resume from (see its log)");
  }
  step = StepFromFloats(header[1], header[2]);
  RS_RETURN_IF_ERROR(Annotate(
      broadcast(context.params, timeout),
      "broadcasting the checkpoint's parameters"));
  std::vector<float> state = ExportOptimizerState(optimizer);
  if (!state.empty()) {
    RS_RETURN_IF_ERROR(Annotate(
        broadcast(absl::MakeSpan(state), timeout),
        "broadcasting the checkpoint's optimizer state"));
    RS_RETURN_IF_ERROR(ImportOptimizerState(optimizer, state));
  }
  return step;
}

absl::StatusOr<std::unique_ptr<LocalOptimizer>> LocalOptimizer::Create(
    const SyncContext& context) {
  if (context.device == Device::kCuda) {
    return CudaLocalOptimizer::Create(context);
  }
  RS_ASSIGN_OR_RETURN(
      std::unique_ptr<Optimizer> optimizer,
      Optimizer::Create(context.optimizer, context.layout.total_elements()));
  return OnHost(context, std::move(optimizer));
}

std::unique_ptr<LocalOptimizer> LocalOptimizer::OnHost(
    const SyncContext& context, std::unique_ptr<Optimizer> optimizer) {
  return std::unique_ptr<LocalOptimizer>(
      new HostLocalOptimizer(context, std::move(optimizer)));
}

absl::StatusOr<LocalStart> StartLocal(
    const SyncContext& context, Collective* collective,
    std::unique_ptr<LocalOptimizer> optimizer) {
  return StartLocal(context, BroadcastOver(collective), std::move(optimizer));
}

absl::StatusOr<LocalStart> StartLocal(
    const SyncContext& context, const RootBroadcast& broadcast,
    std::unique_ptr<LocalOptimizer> optimizer) {
  if (context.world_size > 1) {
    RS_RETURN_IF_ERROR(
        Annotate(broadcast(context.params, context.options.rpc_timeout),
                 "broadcasting rank 0's initial parameters"));
  }
  LocalStart start;
  if (optimizer != nullptr) {
    start.optimizer = std::move(optimizer);
  } else {
    RS_ASSIGN_OR_RETURN(start.optimizer, LocalOptimizer::Create(context));
  }
  RS_ASSIGN_OR_RETURN(start.start_step, start.optimizer->Resume(broadcast));
  return start;
}

}  // namespace ringside
