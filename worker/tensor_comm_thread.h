// TensorCommThread: the per-tensor communication pipeline of the all-reduce
// strategies that overlap communication with backward (ring_fp16,
// hierarchical). The training thread Enqueue()s each tensor as backward
// makes its gradient final; one communication thread runs `reduce(tensor,
// step)` on each in order; FinishStep's WaitForStep blocks until every
// tensor of the step is done. The first failure is kept and returned by
// WaitForStep; later tensors of a broken step are skipped (a collective
// group is unusable after an error).
//
// Timeline (when given): QUEUE on the tensor's lane, from Enqueue to the
// start of its reduce (args: step, bytes). `reduce` records its own phases.
//
// Thread-safety: Enqueue and WaitForStep from the training thread only;
// `reduce` runs on the communication thread only (so a Collective used only
// inside it needs no lock). Stop joins the thread; the destructor stops.
#ifndef RINGSIDE_WORKER_TENSOR_COMM_THREAD_H_
#define RINGSIDE_WORKER_TENSOR_COMM_THREAD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/timeline.h"
#include "models/tensor_layout.h"

namespace ringside {

class TensorCommThread {
 public:
  // Reduces one tensor's gradient of `step` in place; blocking.
  using ReduceFn = std::function<absl::Status(int tensor, int64_t step)>;

  // Starts the thread. `layout` and `timeline` (may be null) must outlive
  // this object.
  TensorCommThread(const TensorLayout* layout, Timeline* timeline,
                   ReduceFn reduce);
  ~TensorCommThread();
  TensorCommThread(const TensorCommThread&) = delete;
  TensorCommThread& operator=(const TensorCommThread&) = delete;

  // Queues tensor `tensor` of the current step. Non-blocking.
  void Enqueue(int tensor);
  // Blocks until every tensor of `step` has been reduced (or `timeout`:
  // DEADLINE_EXCEEDED saying how many were), then moves to step + 1.
  // Returns the first reduce error of the step (the pipeline stays broken).
  absl::Status WaitForStep(int64_t step, absl::Duration timeout);
  // Stops and joins the thread; queued tensors are dropped. Idempotent.
  void Stop();

 private:
  struct Queued {
    int tensor = 0;
    int64_t step = 0;
    double ready_s = 0.0;  // NowSeconds() at Enqueue; timeline only
  };
  void Loop();

  const TensorLayout* const layout_;
  Timeline* const timeline_;
  const ReduceFn reduce_;

  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  int reduced_ ABSL_GUARDED_BY(mu_) = 0;   // tensors done this step
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;  // the step being reduced
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_TENSOR_COMM_THREAD_H_
