// SequencedCommThread: one communication thread running the operations the
// training thread queues, in queue order, for strategies that wait on a
// particular operation rather than on a whole step (zero3: the all-gather
// of one tensor's parameters before the model reads them, while the next
// one is already queued). Enqueue returns a ticket; Wait(ticket) blocks
// until that operation and every one before it have run.
//
// The first failure is kept: later operations are skipped (a collective
// group is unusable after an error), and every Wait from then on returns
// it. Every Wait has a deadline (DEADLINE_EXCEEDED naming `what`).
//
// Thread-safety: Enqueue and Wait from one thread (the training thread);
// the operations run on the communication thread only, so what they alone
// touch (a Collective) needs no lock. Stop joins; the destructor stops.
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
  // Blocks until operation `ticket` and all before it have run (OK), the
  // pipeline has failed (its first error), or `timeout` passes
  // (DEADLINE_EXCEEDED naming `what`).
  absl::Status Wait(int64_t ticket, absl::Duration timeout,
                    const std::string& what);
  // Wait for everything queued so far.
  absl::Status WaitAll(absl::Duration timeout, const std::string& what);
  // Stops and joins the thread; queued operations are dropped. Idempotent.
  void Stop();

 private:
  void Loop();

  int64_t issued_ = 0;  // training thread only
  absl::Mutex mu_;
  std::deque<Operation> queue_ ABSL_GUARDED_BY(mu_);
  int64_t done_ ABSL_GUARDED_BY(mu_) = 0;  // operations run (or skipped)
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_COMM_SEQUENCED_COMM_THREAD_H_
