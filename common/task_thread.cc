#include "common/task_thread.h"

#include <utility>

#include <glog/logging.h>

namespace ringside {

TaskThread::TaskThread() : thread_([this] { Loop(); }) {}

TaskThread::~TaskThread() {
  Wait();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void TaskThread::Run(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  CHECK(!pending_) << "TaskThread::Run with a task still in flight";
  task_ = std::move(task);
  pending_ = true;
}

void TaskThread::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &TaskThread::Idle));
}

bool TaskThread::busy() const {
  absl::MutexLock lock(&mu_);
  return pending_;
}

bool TaskThread::Idle() const { return !pending_; }

bool TaskThread::HasWorkOrStop() const {
  return (pending_ && task_ != nullptr) || stop_;
}

void TaskThread::Loop() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &TaskThread::HasWorkOrStop));
      if (stop_) return;
      task = std::exchange(task_, nullptr);
    }
    task();
    absl::MutexLock lock(&mu_);
    pending_ = false;
  }
}

}  // namespace ringside
