// SequencedCommThread: the one communication thread of the strategies. It
// runs the operations the training thread queues, in queue order. Enqueue
// returns a ticket; Wait(ticket) blocks until that operation and every one
// before it have run, for strategies that wait on a particular operation
// (zero3: the all-gather of one tensor's parameters before the model reads
// it, while the next one is already queued). Per-step users wrap it
// (CommQueueThread, comm_queue_thread.h).
//
// The first failure, from an operation or from Fail(), is kept: later
// operations are skipped (counted as done without being run; a collective
// group is unusable after an error), and every Wait from then on returns
// it. Every Wait has a deadline (DEADLINE_EXCEEDED naming `what`).
//
// Thread-safety: Enqueue and the waits from one thread (the training
// thread); Fail and error from any. The operations run on the
// communication thread only, so what they alone touch (a Collective) needs
// no lock. Stop joins; the destructor stops.
#ifndef RINGSIDE_WORKER_STRATEGIES_COMM_SEQUENCED_COMM_THREAD_H_
#define RINGSIDE_WORKER_STRATEGIES_COMM_SEQUENCED_COMM_THREAD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringside {

class SequencedCommThread {
 public:
  using Operation = std::function<absl::Status()>;

  SequencedCommThread();
  ~SequencedCommThread();
  SequencedCommThread(const SequencedCommThread&) = delete;
  SequencedCommThread& operator=(const SequencedCommThread&) = delete;

  // Queues `op`; returns its ticket (0, 1, 2, ... in queue order).
  int64_t Enqueue(Operation op);
  // Tickets issued so far (the next Enqueue's ticket).
  int64_t issued() const { return issued_; }
  // Breaks the pipeline with `error` unless it is already broken: operations
  // not yet started are skipped. An OK `error` does nothing.
  void Fail(const absl::Status& error);
  // Blocks until operation `ticket` and all before it have run (OK), the
  // pipeline has failed (its first error), or `timeout` passes
  // (DEADLINE_EXCEEDED naming `what`).
  absl::Status Wait(int64_t ticket, absl::Duration timeout,
                    const std::string& what);
  // Wait for everything queued so far.
  absl::Status WaitAll(absl::Duration timeout, const std::string& what);
  // Blocks until the operations with tickets below `count` are all done
  // (run, or skipped after a failure) or `timeout` passes; returns how many
  // operations are done. Unlike Wait, a failure does not end the wait.
  int64_t WaitDone(int64_t count, absl::Duration timeout);
  // The first failure; OK while there is none.
  absl::Status error() const;
  // Stops and joins the thread; queued operations are dropped. Idempotent.
  void Stop();

 private:
  void Loop();

  int64_t issued_ = 0;  // training thread only
  mutable absl::Mutex mu_;
  std::deque<Operation> queue_ ABSL_GUARDED_BY(mu_);
  int64_t done_ ABSL_GUARDED_BY(mu_) = 0;  // operations run (or skipped)
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_COMM_SEQUENCED_COMM_THREAD_H_
