// SequencedCommThread: operations run in queue order on one thread, Wait
// covers an operation and everything before it, the first failure is kept
// and skips the rest, and every wait has a deadline.
#include "worker/strategies/comm/sequenced_comm_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"

namespace ringside {
namespace {

TEST(SequencedCommThreadTest, RunsInOrderAndWaitsForATicket) {
  SequencedCommThread comm;
  std::vector<int> ran;  // written by the communication thread only
  std::thread::id runner;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(comm.Enqueue([&, i] {
      ran.push_back(i);
      runner = std::this_thread::get_id();
      return absl::OkStatus();
    }),
              i);
  }
  EXPECT_EQ(comm.issued(), 5);
  ASSERT_TRUE(comm.Wait(2, absl::Seconds(10), "op 2").ok());
  ASSERT_TRUE(comm.WaitAll(absl::Seconds(10), "all").ok());
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_NE(runner, std::this_thread::get_id());
}

TEST(SequencedCommThreadTest, FirstFailureIsKeptAndSkipsTheRest) {
  SequencedCommThread comm;
  std::atomic<int> ran{0};
  comm.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  comm.Enqueue([] { return absl::UnavailableError("peer gone"); });
  comm.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  const absl::Status s = comm.WaitAll(absl::Seconds(10), "all");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(ran.load(), 1);
  // Later waits, even for an earlier ticket, report the failure.
  EXPECT_EQ(comm.Wait(0, absl::Seconds(10), "op 0").code(),
            absl::StatusCode::kUnavailable);
}

TEST(SequencedCommThreadTest, FailKeepsTheFirstErrorAndSkipsLaterOperations) {
  SequencedCommThread comm;
  std::atomic<int> ran{0};
  comm.Fail(absl::OkStatus());  // not a failure
  EXPECT_TRUE(comm.error().ok());
  comm.Fail(absl::InternalError("enqueue failed"));
  comm.Fail(absl::UnavailableError("second error"));  // the first is kept
  comm.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  comm.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  EXPECT_EQ(comm.WaitAll(absl::Seconds(10), "all").code(),
            absl::StatusCode::kInternal);
  // The skipped operations still count as done.
  EXPECT_EQ(comm.WaitDone(2, absl::Seconds(10)), 2);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(comm.error().code(), absl::StatusCode::kInternal);
}

TEST(SequencedCommThreadTest, WaitDoneOutlastsAFailureUntilTheRunningOpEnds) {
  SequencedCommThread comm;
  absl::Notification started;
  absl::Notification release;
  comm.Enqueue([&] {
    started.Notify();
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
    return absl::OkStatus();
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  comm.Fail(absl::InternalError("broken"));
  // Wait returns the failure at once; WaitDone waits for the running op.
  EXPECT_EQ(comm.Wait(0, absl::Seconds(10), "op 0").code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(comm.WaitDone(1, absl::Milliseconds(50)), 0);
  release.Notify();
  EXPECT_EQ(comm.WaitDone(1, absl::Seconds(10)), 1);
}

TEST(SequencedCommThreadTest, WaitHasADeadlineNamingWhatItWaitedFor) {
  SequencedCommThread comm;
  absl::Notification release;
  comm.Enqueue([&] {
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
    return absl::OkStatus();
  });
  const absl::Status s =
      comm.Wait(0, absl::Milliseconds(50), "the all-gather of fc0.weight");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(std::string(s.message()).find("the all-gather of fc0.weight"),
            std::string::npos);
  release.Notify();
  EXPECT_TRUE(comm.WaitAll(absl::Seconds(10), "all").ok());
  EXPECT_TRUE(SequencedCommThread().WaitAll(absl::Seconds(1), "none").ok());
}

TEST(SequencedCommThreadTest, AfterStopNothingRunsAndWaitsSaySo) {
  SequencedCommThread comm;
  comm.Stop();
  comm.Stop();  // idempotent
  std::atomic<int> ran{0};
  const int64_t ticket = comm.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  EXPECT_EQ(comm.Wait(ticket, absl::Seconds(1), "op").code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace ringside
