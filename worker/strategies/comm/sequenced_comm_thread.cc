#include "worker/strategies/comm/sequenced_comm_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringside {

SequencedCommThread::SequencedCommThread() : thread_([this] { Loop(); }) {}

SequencedCommThread::~SequencedCommThread() { Stop(); }

int64_t SequencedCommThread::Enqueue(Operation op) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(op));
  return issued_++;
}

void SequencedCommThread::Fail(const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (!error.ok() && error_.ok()) error_ = error;
}

absl::Status SequencedCommThread::Wait(int64_t ticket, absl::Duration timeout,
                                       const std::string& what) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ > ticket || !error_.ok() || stop_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("timed out after ", absl::FormatDuration(timeout),
                     " waiting for ", what, " (", done_, " of ", ticket + 1,
                     " communication operations done)"));
  }
  if (!error_.ok()) return error_;
  if (done_ <= ticket) {
    return absl::CancelledError(absl::StrCat(what, ": communication stopped"));
  }
  return absl::OkStatus();
}

absl::Status SequencedCommThread::WaitAll(absl::Duration timeout,
                                          const std::string& what) {
  if (issued_ == 0) return absl::OkStatus();
  return Wait(issued_ - 1, timeout, what);
}

int64_t SequencedCommThread::WaitDone(int64_t count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ >= count;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return done_;
}

absl::Status SequencedCommThread::error() const {
  absl::MutexLock lock(&mu_);
  return error_;
}

void SequencedCommThread::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void SequencedCommThread::Loop() {
  for (;;) {
    Operation op;
    bool skip = false;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](SequencedCommThread* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) {
            return t->stop_ || !t->queue_.empty();
          },
          this));
      if (stop_) return;
      op = std::move(queue_.front());
      queue_.pop_front();
      skip = !error_.ok();
    }
    absl::Status s = skip ? absl::OkStatus() : op();
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) error_ = std::move(s);
    ++done_;
  }
}

}  // namespace ringside
