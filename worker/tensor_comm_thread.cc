#include "worker/tensor_comm_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {

TensorCommThread::TensorCommThread(const TensorLayout* layout,
                                   Timeline* timeline, ReduceFn reduce)
    : layout_(layout),
      timeline_(timeline),
      reduce_(std::move(reduce)),
      thread_([this] { Loop(); }) {}

TensorCommThread::~TensorCommThread() { Stop(); }

void TensorCommThread::Enqueue(int tensor) {
  const double now = timeline_ ? NowSeconds() : 0.0;
  absl::MutexLock lock(&mu_);
  queue_.push_back({tensor, step_, now});
}

void TensorCommThread::Loop() {
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
    if (timeline_ != nullptr) {
      const TensorSpec& spec = layout_->tensor(item.tensor);
      timeline_->Span(spec.name, "QUEUE", item.ready_s, NowSeconds(),
                      {{"step", item.step}, {"bytes", spec.size * 4}});
    }
    absl::Status s = reduce_(item.tensor, item.step);
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) {
      error_ = Annotate(s, absl::StrCat("tensor ",
                                        layout_->tensor(item.tensor).name));
    }
    ++reduced_;
  }
}

absl::Status TensorCommThread::WaitForStep(int64_t step,
                                           absl::Duration timeout) {
  const int n = layout_->num_tensors();
  absl::MutexLock lock(&mu_);
  auto all_done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reduced_ == n;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&all_done), timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "step ", step, ": only ", reduced_, " of ", n,
        " tensors reduced within the deadline (was OnGradientReady called "
        "for every tensor?)"));
  }
  reduced_ = 0;
  step_ = step + 1;
  return error_;
}

void TensorCommThread::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace ringside
