#include "worker/strategies/comm/comm_queue_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/stopwatch.h"

namespace ringside {

CommQueueThread::CommQueueThread(int items_per_step, std::string items_done,
                                 bool read_clock, WorkFn work)
    : items_per_step_(items_per_step),
      items_done_(std::move(items_done)),
      read_clock_(read_clock),
      work_(std::move(work)) {}

CommQueueThread::~CommQueueThread() { Stop(); }

void CommQueueThread::Enqueue(int item) {
  const double queued_s = read_clock_ ? NowSeconds() : 0.0;
  comm_.Enqueue([this, item, step = step_, queued_s] {
    return work_(item, step, queued_s);
  });
}

void CommQueueThread::Fail(const absl::Status& error) { comm_.Fail(error); }

absl::Status CommQueueThread::WaitForStep(int64_t step,
                                          absl::Duration timeout) {
  const int64_t end = first_ticket_ + items_per_step_;
  const int64_t done = comm_.WaitDone(end, timeout);
  if (done < end) {
    return absl::DeadlineExceededError(absl::StrCat(
        "step ", step, ": only ", done - first_ticket_, " of ", items_per_step_,
        " ", items_done_,
        " within the deadline (was OnGradientReady called for every "
        "tensor?)"));
  }
  first_ticket_ = end;
  step_ = step + 1;
  return comm_.error();
}

void CommQueueThread::Stop() { comm_.Stop(); }

}  // namespace ringside
