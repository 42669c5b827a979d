// Gloo's event-loop pacing: the brake's rule on made-up times, the loop
// policy's names, and, through a real 2-rank Gloo group, that the
// process's epoll_wait sees Gloo's loop threads (and only theirs).
#include "collectives/gloo_loop_pacing.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "collectives/gloo_collective.h"
#include "collectives/in_memory_store.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::ExpectAllOk;
using ::ringside::testing::RunRanks;

// kSpinCalls calls in a row, each within kSpinGapNanos of the last
// return with events, start the pauses; a call after a return without
// events, or after a longer gap, ends them.
TEST(SpinBrakeTest, PausesOnlyARunOfCallsRightAfterReturnsWithEvents) {
  SpinBrake brake;
  int64_t now = 1000000;
  EXPECT_FALSE(brake.Enter(now));  // nothing returned yet
  brake.Returned(1, now += 100);
  for (int i = 1; i < kSpinCalls; ++i) {
    EXPECT_FALSE(brake.Enter(now += 500)) << i;
    brake.Returned(1, now += 100);
  }
  EXPECT_TRUE(brake.Enter(now += 500));  // the kSpinCalls-th in a row
  brake.Returned(1, now += 100);
  EXPECT_TRUE(brake.Enter(now += 500));
  brake.Returned(0, now += 100);       // blocked, nothing ready
  EXPECT_FALSE(brake.Enter(now += 500));
  brake.Returned(1, now += 100);
  EXPECT_FALSE(brake.Enter(now += kSpinGapNanos));  // the handler did I/O
}

TEST(GlooEventLoopTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (GlooEventLoop loop :
       {GlooEventLoop::kPaced, GlooEventLoop::kIdle, GlooEventLoop::kNormal}) {
    absl::StatusOr<GlooEventLoop> parsed =
        ParseGlooEventLoop(GlooEventLoopName(loop));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, loop);
  }
  absl::StatusOr<GlooEventLoop> bad = ParseGlooEventLoop("fast");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("paced, idle or normal"),
            std::string::npos);
}

// Each rank's device has a loop thread that calls the process's
// epoll_wait; no thread of this test's own calls it.
TEST(GlooLoopStatsTest, CountsTheLoopThreadsOfARealGroup) {
  ASSERT_EQ(ReadGlooLoopStats().threads, 0);
  InMemoryStore store;
  GlooCollectiveOptions options;
  options.connect_timeout = absl::Seconds(20);
  options.event_loop = GlooEventLoop::kPaced;
  std::vector<std::unique_ptr<Collective>> group(2);
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Collective>> c =
        CreateGlooCollective(store, r, 2, options);
    if (!c.ok()) return c.status();
    group[r] = *std::move(c);
    return absl::OkStatus();
  }));
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    std::vector<float> data(1024, 1.0f);
    for (int i = 0; i < 50; ++i) {
      absl::Status s = group[r]->AllReduce(absl::MakeSpan(data),
                                           ReduceOp::kSum, absl::Seconds(20));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }));
  EXPECT_TRUE(GlooLoopPacing());
  const GlooLoopStats stats = ReadGlooLoopStats();
  EXPECT_GE(stats.threads, 2);
  EXPECT_GT(stats.calls, 0);
  EXPECT_GT(stats.cpu_s, 0);
  EXPECT_GE(stats.wait_s, 0);
  EXPECT_LE(stats.pauses, stats.calls);
}

}  // namespace
}  // namespace ringside
