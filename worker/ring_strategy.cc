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
  comm_thread_ = std::thread([this] { CommLoop(); });
  return absl::OkStatus();
}

void RingStrategy::OnGradientReady(int tensor_index) {
  const double now = context_.options.timeline ? NowSeconds() : 0.0;
  absl::MutexLock lock(&mu_);
  queue_.push_back({tensor_index, step_, now});
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
    const int tensor = item.tensor;
    // CUDA: the gradient was only queued; QUEUE then includes the wait.
    absl::Status s = WaitForGradient(context_, tensor);
    const double start = timeline ? NowSeconds() : 0.0;
    if (s.ok()) {
      s = collective_->AllReduce(context_.layout.View(tensor, context_.grads),
                                 ReduceOp::kAverage,
                                 context_.options.rpc_timeout);
    }
    if (timeline != nullptr) {
      const double end = NowSeconds();
      const TensorSpec& spec = context_.layout.tensor(tensor);
      const nlohmann::json args = {{"step", item.step},
                                   {"bytes", spec.size * 4}};
      timeline->Span(spec.name, "QUEUE", item.ready_s, start, args);
      timeline->Span(spec.name, "ALLREDUCE", start, end, args);
    }
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) {
      error_ = Annotate(s, absl::StrCat("all-reduce of tensor ",
                                        context_.layout.tensor(tensor).name));
    }
    ++reduced_;
  }
}

absl::StatusOr<StepStats> RingStrategy::FinishStep(int64_t step) {
  const int n = context_.layout.num_tensors();
  {
    absl::MutexLock lock(&mu_);
    auto all_done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return reduced_ == n;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&all_done),
                              context_.options.rpc_timeout)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "step ", step, ": only ", reduced_, " of ", n,
          " tensors all-reduced within the deadline (was OnGradientReady "
          "called for every tensor?)"));
    }
    reduced_ = 0;
    step_ = step + 1;
    if (!error_.ok()) return error_;
  }
  return optimizer_->Step(step);
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
                           "ring all-reduce per gradient tensor (Gloo on "
                           "CPU, NCCL on CUDA), overlapped with backward");

}  // namespace ringside
