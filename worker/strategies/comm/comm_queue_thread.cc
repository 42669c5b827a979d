#include "worker/strategies/comm/comm_queue_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {

CommQueueThread::CommQueueThread(int items_per_step, std::string items_done,
                                 bool read_clock, WorkFn work)
    : items_per_step_(items_per_step),
      items_done_(std::move(items_done)),
      read_clock_(read_clock),
      work_(std::move(work)),
      thread_([this] { Loop(); }) {}

CommQueueThread::~CommQueueThread() { Stop(); }

void CommQueueThread::Enqueue(int item) {
  const double now = read_clock_ ? NowSeconds() : 0.0;
  absl::MutexLock lock(&mu_);
  queue_.push_back({item, step_, now});
}

void CommQueueThread::Fail(const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (error_.ok()) error_ = error;
}

void CommQueueThread::Loop() {
  while (true) {
    Queued queued;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      queued = queue_.front();
      queue_.pop_front();
      if (!error_.ok()) {  // broken: count, do not run
        ++done_;
        continue;
      }
    }
    absl::Status s = work_(queued.item, queued.step, queued.queued_s);
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) error_ = s;
    ++done_;
  }
}

absl::Status CommQueueThread::WaitForStep(int64_t step,
                                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto all_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ == items_per_step_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&all_done), timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("step ", step, ": only ", done_, " of ", items_per_step_,
                     " ", items_done_,
                     " within the deadline (was OnGradientReady called for "
                     "every tensor?)"));
  }
  done_ = 0;
  step_ = step + 1;
  return error_;
}

void CommQueueThread::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace ringside
