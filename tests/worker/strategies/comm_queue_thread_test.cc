// CommQueueThread runs each step's items in order on its own thread, keeps
// the first failure (from the work or from Fail) and skips what follows it,
// and bounds WaitForStep by its timeout.
#include "worker/strategies/comm/comm_queue_thread.h"

#include <atomic>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

struct Log {
  absl::Mutex mu;
  std::vector<std::pair<int, int64_t>> ran ABSL_GUARDED_BY(mu);
  std::vector<std::pair<int, int64_t>> Ran() {
    absl::MutexLock lock(&mu);
    return ran;
  }
};

CommQueueThread::WorkFn Recording(Log* log, int fail_item = -1) {
  return [log, fail_item](int item, int64_t step, double) -> absl::Status {
    absl::MutexLock lock(&log->mu);
    log->ran.push_back({item, step});
    if (item == fail_item) return absl::UnavailableError("peer gone");
    return absl::OkStatus();
  };
}

TEST(CommQueueThreadTest, RunsEachStepsItemsInOrder) {
  Log log;
  CommQueueThread queue(3, "items done", false, Recording(&log));
  for (int64_t step = 0; step < 2; ++step) {
    for (int item : {2, 0, 1}) queue.Enqueue(item);
    ASSERT_TRUE(queue.WaitForStep(step, absl::Seconds(10)).ok());
  }
  const std::vector<std::pair<int, int64_t>> want = {{2, 0}, {0, 0}, {1, 0},
                                                     {2, 1}, {0, 1}, {1, 1}};
  EXPECT_EQ(log.Ran(), want);
}

TEST(CommQueueThreadTest, FirstErrorIsKeptAndLaterItemsAreSkipped) {
  Log log;
  CommQueueThread queue(3, "items done", false, Recording(&log, 0));
  for (int item : {1, 0, 2}) queue.Enqueue(item);
  absl::Status s = queue.WaitForStep(0, absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  const std::vector<std::pair<int, int64_t>> ran = {{1, 0}, {0, 0}};
  EXPECT_EQ(log.Ran(), ran);
  // The pipeline stays broken: the next step runs nothing.
  for (int item : {0, 1, 2}) queue.Enqueue(item);
  EXPECT_EQ(queue.WaitForStep(1, absl::Seconds(10)).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(log.Ran(), ran);
}

TEST(CommQueueThreadTest, FailFromTheCallerSkipsTheRest) {
  Log log;
  CommQueueThread queue(2, "items done", false, Recording(&log));
  queue.Fail(absl::InternalError("enqueue failed"));
  queue.Fail(absl::UnavailableError("second error"));  // the first is kept
  queue.Enqueue(0);
  queue.Enqueue(1);
  absl::Status s = queue.WaitForStep(0, absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_TRUE(log.Ran().empty());
}

TEST(CommQueueThreadTest, FailWaitsForTheRunningItemBeforeReturning) {
  absl::Notification started;
  absl::Notification release;
  std::atomic<bool> finished{false};
  CommQueueThread queue(2, "items done", false, [&](int item, int64_t, double) {
    if (item == 0) {
      started.Notify();
      release.WaitForNotificationWithTimeout(absl::Seconds(10));
      finished = true;
    }
    return absl::OkStatus();
  });
  queue.Enqueue(0);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  queue.Fail(absl::InternalError("enqueue failed"));
  queue.Enqueue(1);
  // Item 0 is still running: the step is not done.
  EXPECT_EQ(queue.WaitForStep(0, absl::Milliseconds(50)).code(),
            absl::StatusCode::kDeadlineExceeded);
  release.Notify();
  EXPECT_EQ(queue.WaitForStep(0, absl::Seconds(10)).code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(finished.load());
}

TEST(CommQueueThreadTest, MissingItemsEndInADeadlineNamingThem) {
  Log log;
  CommQueueThread queue(2, "gradient buckets all-reduced", false,
                        Recording(&log));
  queue.Enqueue(0);
  const absl::Time start = absl::Now();
  absl::Status s = queue.WaitForStep(7, absl::Milliseconds(200));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("step 7: only 1 of 2 gradient buckets "
                             "all-reduced"),
            std::string::npos)
      << s;
}

TEST(CommQueueThreadTest, StopDropsQueuedItemsAndIsIdempotent) {
  absl::Notification release;
  std::atomic<int> runs{0};
  CommQueueThread queue(3, "items done", false, [&](int, int64_t, double) {
    ++runs;
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
    return absl::OkStatus();
  });
  for (int item : {0, 1, 2}) queue.Enqueue(item);
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  queue.Stop();
  queue.Stop();
  EXPECT_LE(runs.load(), 3);
  EXPECT_GE(runs.load(), 1);
}

}  // namespace
}  // namespace ringside
