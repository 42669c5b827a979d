#include "worker/strategies/allreduce/ring_strategy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/strategies/allreduce/rank_state.h"

namespace ringside {

RingStrategy::~RingStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status RingStrategy::Init(const SyncContext& context) {
  context_ = context;
  // The optimizer first: a configuration it refuses is refused on every
  // rank before any peer is contacted (not as a peer's closed connection).
  RS_ASSIGN_OR_RETURN(std::unique_ptr<LocalOptimizer> optimizer,
                      MakeOptimizer(context_));
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCollective(context, name_, &own_store_));
  RS_ASSIGN_OR_RETURN(
      LocalStart start,
      StartLocal(context_, collective_.get(), std::move(optimizer)));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  RS_ASSIGN_OR_RETURN(Store* const store, JobStore(context_, &own_store_));
  RS_RETURN_IF_ERROR(hook_->Connect(context_, *store, name_, *collective_));
  comm_ = BucketCommThread::ForJob(
      &context_.layout, context.options, "gradient buckets all-reduced",
      [this](const GradientBucket& bucket, int64_t step) {
        return ReduceBucket(bucket, step);
      });
  if (context_.options.resume) RS_RETURN_IF_ERROR(ResumeHookState());
  return absl::OkStatus();
}

std::vector<BucketSpan> RingStrategy::BucketSpans() const {
  std::vector<BucketSpan> spans;
  for (const GradientBucket& b : comm_->buckets()) {
    spans.push_back({b.offset, b.size});
  }
  return spans;
}

absl::Status RingStrategy::MaybeWriteHookState(int64_t step) {
  if (!context_.options.CheckpointDue(step)) return absl::OkStatus();
  std::vector<float> state = hook_->ExportState(BucketSpans());
  if (state.empty()) return absl::OkStatus();
  return WriteRankState(context_, step, name_, "hook state (error feedback)",
                        std::move(state));
}

absl::Status RingStrategy::ResumeHookState() {
  const std::vector<BucketSpan> spans = BucketSpans();
  if (hook_->ExportState(spans).empty()) return absl::OkStatus();
  RS_ASSIGN_OR_RETURN(
      const Checkpoint c,
      ReadRankState(context_, name_, "its hook's state (error feedback)"));
  if (c.step != start_step_) {
    return absl::FailedPreconditionError(absl::StrCat(
        c.writer, "'s file holds the hook state after step ", c.step,
        ", but the model's checkpoint is of step ", start_step_,
        ": a checkpoint interrupted between its files"));
  }
  if (!std::equal(c.params.begin(), c.params.end(),
                  context_.params.begin())) {
    return absl::FailedPreconditionError(absl::StrCat(
        c.writer, "'s parameters differ from the model checkpoint's of the "
        "same step: the two files come from different runs"));
  }
  return Annotate(hook_->ImportState(spans, c.optimizer_state), c.writer);
}

void RingStrategy::OnGradientReady(int tensor_index) {
  comm_->OnGradientReady(tensor_index);
}

absl::Status RingStrategy::ReduceBucket(const GradientBucket& bucket,
                                        int64_t step) {
  // CUDA: the gradients were only queued; QUEUE then includes the wait.
  for (int t = bucket.first_tensor; t <= bucket.last_tensor; ++t) {
    RS_RETURN_IF_ERROR(Annotate(WaitForGradient(context_, t), "all-reduce"));
  }
  const bool timed = context_.options.timeline != nullptr;
  std::vector<HookPhase> phases;
  absl::Status s =
      hook_->Reduce(context_.grads.subspan(bucket.offset, bucket.size),
                    bucket.offset, timed ? &phases : nullptr);
  if (timed && !phases.empty()) {
    const int wire = hook_->wire_bytes_per_element();
    comm_->QueueSpans(bucket, phases.front().start_s, step, wire);
    for (const HookPhase& phase : phases) {
      comm_->SpanEachTensor(bucket, phase.name, phase.start_s, phase.end_s,
                            step, wire);
    }
  }
  return s;
}

absl::StatusOr<StepStats> RingStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->Step(step));
  RS_RETURN_IF_ERROR(MaybeWriteHookState(step));
  // A ring all-reduce's 2(N-1)/N of the buffer, at the hook's share.
  const double share = hook_->TakeWireShare();
  stats.bytes_sent = static_cast<int64_t>(stats.bytes_sent * share);
  stats.bytes_received = static_cast<int64_t>(stats.bytes_received * share);
  return stats;
}

absl::Status RingStrategy::Shutdown() {
  if (comm_ != nullptr) comm_->Stop();
  return absl::OkStatus();
}

RINGSIDE_REGISTER_STRATEGY(
    RingStrategy,
    StrategyInfo("ring", ServerNeed::kNone)
        .Store()
        .Describe("ring all-reduce of gradient buckets (PyTorch DDP's "
                  "scheme: 1 MiB first, then 25 MiB; --ring_bucket_kb=0: per "
                  "tensor; Gloo on CPU, NCCL on CUDA), overlapped with "
                  "backward")
        .Display("Ring")
        .StudyOrder(3)
        .ModelledAs("ring")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"}));

}  // namespace ringside
