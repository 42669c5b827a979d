// TaskThread: tasks run one at a time on one thread kept across them (not
// the caller's), Wait returns once the task has returned, busy() says
// whether one is in flight, and the destructor waits for a task in flight.
#include "common/task_thread.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

TEST(TaskThreadTest, RunsEveryTaskOnOneThreadOfItsOwn) {
  TaskThread thread;
  std::vector<std::thread::id> ids;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) {
    thread.Run([&, i] {
      ids.push_back(std::this_thread::get_id());
      order.push_back(i);
    });
    thread.Wait();
  }
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (const std::thread::id& id : ids) {
    EXPECT_EQ(id, ids[0]);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(TaskThreadTest, WaitReturnsOnceTheTaskHasReturned) {
  TaskThread thread;
  EXPECT_FALSE(thread.busy());
  thread.Wait();  // nothing in flight: returns at once
  absl::Notification release;
  std::atomic<bool> finished{false};
  thread.Run([&] {
    release.WaitForNotification();
    finished = true;
  });
  EXPECT_TRUE(thread.busy());
  EXPECT_FALSE(finished);
  release.Notify();
  thread.Wait();
  EXPECT_TRUE(finished);
  EXPECT_FALSE(thread.busy());
}

TEST(TaskThreadTest, DestructorWaitsForTheTaskInFlight) {
  absl::Notification started;
  std::atomic<bool> finished{false};
  {
    TaskThread thread;
    thread.Run([&] {
      started.Notify();
      // Long enough that a destructor not waiting would return first.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      finished = true;
    });
    started.WaitForNotification();
  }
  EXPECT_TRUE(finished);
}

TEST(TaskThreadDeathTest, RunWithATaskInFlightIsRefused) {
  EXPECT_DEATH(
      {
        TaskThread thread;
        absl::Notification release;
        thread.Run([&] { release.WaitForNotification(); });
        thread.Run([] {});
      },
      "task still in flight");
}

}  // namespace
}  // namespace ringside
