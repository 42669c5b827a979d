// CommQueueThread: per-step work items on the communication thread, for
// the strategies that overlap communication with backward: the gradient
// buckets of ring, ring_fp16 and hierarchical (bucket_comm_thread.h) and
// host staging (device -> host gradient copies). The training thread
// Enqueue()s work item i (a bucket or tensor index) of the current step as
// backward makes it ready; `work(i, step, queued_s)` runs on each, in order,
// on a SequencedCommThread (sequenced_comm_thread.h); WaitForStep blocks
// until the step's `items_per_step` items are done, then moves to the next
// step.
//
// The first failure, from `work` or from Fail(), is kept: WaitForStep
// returns it, and later items are counted without being run (a collective
// group is unusable after an error), so the pipeline stays broken.
// queued_s is NowSeconds() at Enqueue when `read_clock` (a timeline is
// recorded), else 0: `work` records its own timeline spans.
//
// Thread-safety: Enqueue, Fail and WaitForStep from the training thread
// only; `work` runs on the communication thread only (so what it alone
// touches, e.g. a Collective, needs no lock). Stop joins the thread; the
// destructor stops.
#ifndef RINGSIDE_WORKER_STRATEGIES_COMM_COMM_QUEUE_THREAD_H_
#define RINGSIDE_WORKER_STRATEGIES_COMM_COMM_QUEUE_THREAD_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "worker/strategies/comm/sequenced_comm_thread.h"

namespace ringside {

class CommQueueThread {
 public:
  // Runs item `item` of `step`, queued at `queued_s`; blocking.
  using WorkFn =
      std::function<absl::Status(int item, int64_t step, double queued_s)>;

  // Starts the thread. `items_done` names the step's items in the deadline
  // error, e.g. "gradient buckets all-reduced".
  CommQueueThread(int items_per_step, std::string items_done, bool read_clock,
                  WorkFn work);
  ~CommQueueThread();
  CommQueueThread(const CommQueueThread&) = delete;
  CommQueueThread& operator=(const CommQueueThread&) = delete;

  // Queues item `item` of the current step. Non-blocking.
  void Enqueue(int item);
  // Breaks the pipeline with `error` unless it is already broken.
  void Fail(const absl::Status& error);
  // Blocks until every item of `step` is done (or `timeout`:
  // DEADLINE_EXCEEDED saying how many were), then moves to step + 1.
  // Returns the first error (the pipeline stays broken).
  absl::Status WaitForStep(int64_t step, absl::Duration timeout);
  // Stops and joins the thread; queued items are dropped. Idempotent.
  void Stop();

 private:
  const int items_per_step_;
  const std::string items_done_;
  const bool read_clock_;
  const WorkFn work_;

  // Training thread only.
  int64_t step_ = 0;          // the step being enqueued
  int64_t first_ticket_ = 0;  // the comm_ ticket of its first item
  SequencedCommThread comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_COMM_COMM_QUEUE_THREAD_H_
