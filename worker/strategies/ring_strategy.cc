#include "worker/strategies/ring_strategy.h"

#include "absl/strings/str_cat.h"
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
  buckets_ =
      AssignBuckets(context.layout, context.options.ring_first_bucket_bytes,
                    context.options.ring_bucket_bytes);
  bucket_of_.assign(context.layout.num_tensors(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor; ++t) {
      bucket_of_[t] = static_cast<int>(b);
    }
  }
  ResetPending();
  ready_s_.assign(context.layout.num_tensors(), 0.0);
  comm_ = std::make_unique<CommQueueThread>(
      static_cast<int>(buckets_.size()), "gradient buckets all-reduced",
      /*read_clock=*/false, [this](int bucket, int64_t step, double) {
        return ReduceBucket(bucket, step);
      });
  return absl::OkStatus();
}

void RingStrategy::OnGradientReady(int tensor_index) {
  if (context_.options.timeline != nullptr) {
    ready_s_[tensor_index] = NowSeconds();
  }
  const int bucket = bucket_of_[tensor_index];
  if (--pending_[bucket] == 0) comm_->Enqueue(bucket);
}

absl::Status RingStrategy::ReduceBucket(int b, int64_t step) {
  Timeline* timeline = context_.options.timeline;
  const GradientBucket& bucket = buckets_[b];
  // CUDA: the gradients were only queued; QUEUE then includes the wait.
  absl::Status s;
  for (int t = bucket.first_tensor; s.ok() && t <= bucket.last_tensor; ++t) {
    s = WaitForGradient(context_, t);
  }
  const double start = timeline ? NowSeconds() : 0.0;
  if (s.ok()) {
    s = collective_->AllReduce(
        context_.grads.subspan(bucket.offset, bucket.size), ReduceOp::kAverage,
        context_.options.rpc_timeout);
  }
  if (timeline != nullptr) {
    const double end = NowSeconds();
    for (int t = bucket.first_tensor; t <= bucket.last_tensor; ++t) {
      const TensorSpec& spec = context_.layout.tensor(t);
      const nlohmann::json args = {{"step", step},
                                   {"bytes", spec.size * 4},
                                   {"bucket_bytes", bucket.size * 4}};
      timeline->Span(spec.name, "QUEUE", ready_s_[t], start, args);
      timeline->Span(spec.name, "ALLREDUCE", start, end, args);
    }
  }
  return Annotate(
      s, absl::StrCat("all-reduce of tensors ",
                      context_.layout.tensor(bucket.first_tensor).name, " .. ",
                      context_.layout.tensor(bucket.last_tensor).name));
}

absl::StatusOr<StepStats> RingStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  ResetPending();
  return optimizer_->Step(step);
}

void RingStrategy::ResetPending() {
  pending_.resize(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending_[b] = buckets_[b].num_tensors();
  }
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
                  "allreduce_algorithm", "checkpoint_every", "resume"}));

}  // namespace ringside
