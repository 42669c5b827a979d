// TaskThread: one thread kept for the life of its owner that runs one task
// at a time, so that work handed over every step (a parameter server's
// push and pull of the step) does not pay for starting and joining a
// thread each time.
//
// Run hands a task to the thread (the previous one must be waited for);
// Wait blocks until it has returned. The destructor waits for a task in
// flight, then stops and joins the thread: a task must end by itself (its
// own deadlines, or a cancellation its owner sends) for that to return.
//
// Thread-safety: Run and Wait from one owning thread; the task runs on
// the TaskThread's own thread.
#ifndef RINGSIDE_COMMON_TASK_THREAD_H_
#define RINGSIDE_COMMON_TASK_THREAD_H_

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace ringside {

class TaskThread {
 public:
  TaskThread();
  ~TaskThread();
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;

  // Starts `task` on the thread. Precondition: no task in flight (each Run
  // followed by a Wait).
  void Run(std::function<void()> task);
  // Blocks until the task Run handed over has returned; at once when none
  // is in flight.
  void Wait();
  // Whether a task was handed over and not yet waited for.
  bool busy() const;

 private:
  void Loop();
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWorkOrStop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::function<void()> task_ ABSL_GUARDED_BY(mu_);
  bool pending_ ABSL_GUARDED_BY(mu_) = false;  // handed over, not returned
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringside

#endif  // RINGSIDE_COMMON_TASK_THREAD_H_
