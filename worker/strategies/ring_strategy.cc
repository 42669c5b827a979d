#include "worker/strategies/ring_strategy.h"

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

RingStrategy::~RingStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status RingStrategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCollective(context, "ring", &own_store_));
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(context.params, 0, context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(optimizer_, LocalOptimizer::Create(context_));
  RS_ASSIGN_OR_RETURN(start_step_, optimizer_->Resume(collective_.get()));
  comm_ = BucketCommThread::ForJob(
      &context_.layout, context.options, "gradient buckets all-reduced",
      [this](const GradientBucket& bucket, int64_t step) {
        return ReduceBucket(bucket, step);
      });
  return absl::OkStatus();
}

void RingStrategy::OnGradientReady(int tensor_index) {
  comm_->OnGradientReady(tensor_index);
}

absl::Status RingStrategy::ReduceBucket(const GradientBucket& bucket,
                                        int64_t step) {
  // CUDA: the gradients were only queued; QUEUE then includes the wait.
  absl::Status s;
  for (int t = bucket.first_tensor; s.ok() && t <= bucket.last_tensor; ++t) {
    s = WaitForGradient(context_, t);
  }
  const bool timed = context_.options.timeline != nullptr;
  const double start = timed ? NowSeconds() : 0.0;
  if (s.ok()) {
    s = collective_->AllReduce(
        context_.grads.subspan(bucket.offset, bucket.size), ReduceOp::kAverage,
        context_.options.rpc_timeout);
  }
  if (timed) {
    const double end = NowSeconds();
    comm_->QueueSpans(bucket, start, step, 4);
    comm_->SpanEachTensor(bucket, "ALLREDUCE", start, end, step, 4);
  }
  return Annotate(s, "all-reduce");
}

absl::StatusOr<StepStats> RingStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  return optimizer_->Step(step);
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
