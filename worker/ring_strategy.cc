#include "worker/ring_strategy.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/allreduce_support.h"

namespace ringside {

RingStrategy::~RingStrategy() { StopThread(); }

absl::Status RingStrategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCollective(context, "ring", &own_store_));
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(context.params, 0, context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(optimizer_, LocalOptimizer::Create(context_));
  RS_ASSIGN_OR_RETURN(start_step_, optimizer_->Resume(collective_.get()));
  buckets_ = AssignBuckets(context.layout,
                           context.options.ring_first_bucket_bytes,
                           context.options.ring_bucket_bytes);
  bucket_of_.assign(context.layout.num_tensors(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor; ++t) {
      bucket_of_[t] = static_cast<int>(b);
    }
  }
  {
    absl::MutexLock lock(&mu_);
    ResetPending();
    ready_s_.assign(context.layout.num_tensors(), 0.0);
  }
  comm_thread_ = std::thread([this] { CommLoop(); });
  return absl::OkStatus();
}

void RingStrategy::OnGradientReady(int tensor_index) {
  const double now = context_.options.timeline ? NowSeconds() : 0.0;
  const int bucket = bucket_of_[tensor_index];
  absl::MutexLock lock(&mu_);
  ready_s_[tensor_index] = now;
  if (--pending_[bucket] == 0) queue_.push_back({bucket, step_});
}

void RingStrategy::CommLoop() {
  while (true) {
    Queued item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      item = queue_.front();
      queue_.pop_front();
      if (!error_.ok()) {  // the group is unusable after an error
        ++reduced_;
        continue;
      }
    }
    Timeline* timeline = context_.options.timeline;
    const GradientBucket& bucket = buckets_[item.bucket];
    // CUDA: the gradients were only queued; QUEUE then includes the wait.
    absl::Status s;
    for (int t = bucket.first_tensor; s.ok() && t <= bucket.last_tensor; ++t) {
      s = WaitForGradient(context_, t);
    }
    const double start = timeline ? NowSeconds() : 0.0;
    if (s.ok()) {
      s = collective_->AllReduce(
          context_.grads.subspan(bucket.offset, bucket.size),
          ReduceOp::kAverage, context_.options.rpc_timeout);
    }
    if (timeline != nullptr) {
      const double end = NowSeconds();
      for (int t = bucket.first_tensor; t <= bucket.last_tensor; ++t) {
        const TensorSpec& spec = context_.layout.tensor(t);
        const nlohmann::json args = {{"step", item.step},
                                     {"bytes", spec.size * 4},
                                     {"bucket_bytes", bucket.size * 4}};
        double ready = 0.0;
        {
          absl::MutexLock lock(&mu_);
          ready = ready_s_[t];
        }
        timeline->Span(spec.name, "QUEUE", ready, start, args);
        timeline->Span(spec.name, "ALLREDUCE", start, end, args);
      }
    }
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) {
      error_ = Annotate(
          s, absl::StrCat("all-reduce of tensors ",
                          context_.layout.tensor(bucket.first_tensor).name,
                          " .. ",
                          context_.layout.tensor(bucket.last_tensor).name));
    }
    ++reduced_;
  }
}

absl::StatusOr<StepStats> RingStrategy::FinishStep(int64_t step) {
  const int n = static_cast<int>(buckets_.size());
  {
    absl::MutexLock lock(&mu_);
    auto all_done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return reduced_ == n;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&all_done),
                              context_.options.rpc_timeout)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "step ", step, ": only ", reduced_, " of ", n,
          " gradient buckets all-reduced within the deadline (was "
          "OnGradientReady called for every tensor?)"));
    }
    reduced_ = 0;
    ResetPending();
    step_ = step + 1;
    if (!error_.ok()) return error_;
  }
  return optimizer_->Step(step);
}

void RingStrategy::ResetPending() {
  pending_.resize(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending_[b] = buckets_[b].num_tensors();
  }
}

void RingStrategy::StopThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (comm_thread_.joinable()) comm_thread_.join();
}

absl::Status RingStrategy::Shutdown() {
  StopThread();
  return absl::OkStatus();
}

RINGSIDE_REGISTER_STRATEGY(RingStrategy, "ring", ServerNeed::kNone,
                           /*needs_store=*/true,
                           "ring all-reduce of gradient buckets (PyTorch "
                           "DDP's scheme: 1 MiB first, then 25 MiB; "
                           "--ring_bucket_kb=0: per tensor; Gloo on CPU, "
                           "NCCL on CUDA), overlapped with backward");

}  // namespace ringside
