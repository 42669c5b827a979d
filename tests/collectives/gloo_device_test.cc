// CreateGlooTcpDevice: with GlooEventLoop::kIdle the device's event-loop
// thread, and only it, runs at SCHED_IDLE; the caller's policy is
// unchanged; paced and normal loops keep the normal policy.
#include "collectives/gloo_device.h"

#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

// This process's threads with policy SCHED_IDLE.
int IdleThreads() {
  int idle = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int policy = sched_getscheduler(std::atoi(entry->d_name));
    if (policy == SCHED_IDLE) ++idle;
  }
  closedir(dir);
  return idle;
}

TEST(GlooDeviceTest, IdleEventLoopRunsOnlyTheLoopAtSchedIdle) {
  ASSERT_EQ(IdleThreads(), 0);
  bool idle = false;
  auto device = CreateGlooTcpDevice("127.0.0.1", "", GlooEventLoop::kIdle,
                                    "test", &idle);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(idle);
  EXPECT_EQ(IdleThreads(), 1);  // the loop thread; the helper is gone
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
  device->reset();
  EXPECT_EQ(IdleThreads(), 0);
}

// Paced and normal loops keep the normal policy; the spin brake is on for
// paced only.
TEST(GlooDeviceTest, PacedAndNormalEventLoopsKeepTheNormalPolicy) {
  for (GlooEventLoop loop : {GlooEventLoop::kPaced, GlooEventLoop::kNormal}) {
    bool idle = true;
    auto device = CreateGlooTcpDevice("127.0.0.1", "", loop, "test", &idle);
    ASSERT_TRUE(device.ok()) << device.status();
    EXPECT_FALSE(idle);
    EXPECT_EQ(IdleThreads(), 0);
    EXPECT_EQ(GlooLoopPacing(), loop == GlooEventLoop::kPaced);
  }
}

TEST(GlooDeviceTest, UnknownInterfaceIsUnavailableNamingTheCaller) {
  for (GlooEventLoop loop :
       {GlooEventLoop::kPaced, GlooEventLoop::kIdle, GlooEventLoop::kNormal}) {
    auto device = CreateGlooTcpDevice("127.0.0.1", "no-such-if0", loop,
                                      "rank 3's group");
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_NE(device.status().message().find("rank 3's group"),
              std::string::npos)
        << device.status();
    EXPECT_NE(device.status().message().find("no-such-if0"),
              std::string::npos)
        << device.status();
  }
}

}  // namespace
}  // namespace ringside
