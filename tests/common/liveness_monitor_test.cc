// PeerTracker on a fake clock, and LivenessMonitor's loop with a scripted
// heartbeat source and short real periods.
#include "common/liveness_monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace ringside {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(PeerTrackerTest, NobodyIsLostWithinTheTimeout) {
  PeerTracker peers(absl::Seconds(3));
  peers.Track(1, "rank 1", kT0);
  peers.Track(2, "rank 2", kT0);
  EXPECT_FALSE(peers.FindLost(kT0 + absl::Seconds(3)).has_value());
  peers.Seen(1, kT0 + absl::Seconds(2), 7);
  peers.Seen(2, kT0 + absl::Seconds(2), 7);
  EXPECT_FALSE(peers.FindLost(kT0 + absl::Seconds(5)).has_value());
}

TEST(PeerTrackerTest, NamesThePeerSilentTheLongestWithItsLastStep) {
  PeerTracker peers(absl::Seconds(3));
  peers.Track(0, "rank 0", kT0);
  peers.Track(1, "rank 1", kT0);
  peers.Track(2, "rank 2", kT0);
  peers.Seen(0, kT0 + absl::Seconds(1), 10);
  peers.Seen(1, kT0 + absl::Seconds(2), 11);  // rank 2 never again
  peers.Seen(2, kT0 + absl::Milliseconds(500), 9);
  std::optional<LostPeer> lost = peers.FindLost(kT0 + absl::Seconds(4));
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->id, 2);
  EXPECT_EQ(lost->silent, absl::Milliseconds(3500));
  EXPECT_EQ(lost->last_step, 9);
  EXPECT_EQ(lost->Describe(),
            "rank 2 lost: no heartbeat for 3.5 s (last seen at step 9)");
  EXPECT_EQ(lost->Describe("this rank", 12),
            "rank 2 lost: no heartbeat for 3.5 s (last seen at step 9; this "
            "rank at step 12)");
}

TEST(PeerTrackerTest, DescribeWithoutSteps) {
  LostPeer lost{3, "parameter server shard 3 (h:1)", absl::Seconds(31), -1};
  EXPECT_EQ(lost.Describe(),
            "parameter server shard 3 (h:1) lost: no heartbeat for 31.0 s");
  EXPECT_EQ(lost.Describe("this worker", 0),
            "parameter server shard 3 (h:1) lost: no heartbeat for 31.0 s "
            "(this worker at step 0)");
}

TEST(PeerTrackerTest, ForgottenAndUntrackedPeersAreNeverLost) {
  PeerTracker peers(absl::Seconds(1));
  peers.Seen(5, kT0);  // never tracked: ignored
  EXPECT_FALSE(peers.tracked(5));
  peers.Track(1, "rank 1", kT0);
  EXPECT_EQ(peers.num_tracked(), 1);
  peers.Forget(1);
  peers.Track(1, "rank 1", kT0);  // finished peers stay forgotten
  EXPECT_FALSE(peers.tracked(1));
  EXPECT_EQ(peers.num_tracked(), 0);
  EXPECT_FALSE(peers.FindLost(kT0 + absl::Hours(1)).has_value());
}

TEST(PeerTrackerTest, TrackTwiceKeepsTheFirstTime) {
  PeerTracker peers(absl::Seconds(1));
  peers.Track(1, "rank 1", kT0);
  peers.Track(1, "rank 1", kT0 + absl::Seconds(10));
  EXPECT_TRUE(peers.FindLost(kT0 + absl::Seconds(2)).has_value());
}

TEST(PeerTrackerTest, ExcuseSparesObservablePeersButNotLostOnes) {
  PeerTracker peers(absl::Seconds(3));
  peers.Track(-1, "store", kT0);
  peers.Track(1, "rank 1", kT0);
  peers.Track(2, "rank 2", kT0);
  peers.Seen(-1, kT0 + absl::Seconds(1));  // reachable until t=1
  peers.Seen(1, kT0 + absl::Seconds(1));
  // At t=3.5 the store is unreachable: rank 1 (silent 2.5 s) is excused,
  // rank 2 (silent 3.5 s, already lost) is not.
  peers.Excuse(-1, kT0 + absl::Milliseconds(3500));
  std::optional<LostPeer> lost =
      peers.FindLost(kT0 + absl::Milliseconds(3600));
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->name, "rank 2");
  peers.Forget(2);
  // Then only the store's own silence counts.
  peers.Excuse(-1, kT0 + absl::Seconds(4));
  EXPECT_FALSE(peers.FindLost(kT0 + absl::Milliseconds(3900)).has_value());
  lost = peers.FindLost(kT0 + absl::Milliseconds(4100));
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->name, "store");
}

// A source whose peers are scripted by the test.
class ScriptedSource : public HeartbeatSource {
 public:
  absl::Status Beat(int64_t step, absl::Time now, PeerTracker& peers) override {
    absl::MutexLock lock(&mu_);
    ++beats_;
    last_step_ = step;
    peers.Track(1, "rank 1", now);
    if (alive_) peers.Seen(1, now, step);
    return error_;
  }
  void Finish(int64_t step) override {
    absl::MutexLock lock(&mu_);
    finished_at_ = step;
  }
  void set_alive(bool alive) {
    absl::MutexLock lock(&mu_);
    alive_ = alive;
  }
  void set_error(absl::Status s) {
    absl::MutexLock lock(&mu_);
    error_ = std::move(s);
  }
  int beats() {
    absl::MutexLock lock(&mu_);
    return beats_;
  }
  int64_t last_step() {
    absl::MutexLock lock(&mu_);
    return last_step_;
  }
  int64_t finished_at() {
    absl::MutexLock lock(&mu_);
    return finished_at_;
  }

 private:
  absl::Mutex mu_;
  bool alive_ = true;
  absl::Status error_;
  int beats_ = 0;
  int64_t last_step_ = -1;
  int64_t finished_at_ = -1;
};

// A clock the test moves by hand.
class FakeClock {
 public:
  absl::Time Now() {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ = kT0;
};

struct Verdicts {
  absl::Mutex mu;
  std::vector<std::string> seen;
};

LivenessOptions FastOptions(FakeClock* clock, Verdicts* verdicts) {
  LivenessOptions options;
  options.failure_timeout = absl::Seconds(30);  // on the fake clock
  options.period = absl::Milliseconds(10);      // real time between beats
  options.self = "this rank";
  options.now = [clock] { return clock->Now(); };
  options.on_verdict = [verdicts](const std::string& v) {
    absl::MutexLock lock(&verdicts->mu);
    verdicts->seen.push_back(v);
  };
  return options;
}

TEST(LivenessMonitorTest, BadOptionsAreRefused) {
  LivenessOptions options;
  options.failure_timeout = absl::ZeroDuration();
  EXPECT_EQ(LivenessMonitor::Start(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.failure_timeout = absl::Seconds(1);
  options.period = absl::Seconds(2);
  EXPECT_EQ(LivenessMonitor::Start(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.period = absl::ZeroDuration();
  EXPECT_EQ(options.EffectivePeriod(), absl::Seconds(1) / 6);
}

TEST(LivenessMonitorTest, SilentPeerGivesOneVerdictWithBothSteps) {
  FakeClock clock;
  Verdicts verdicts;
  auto source = std::make_unique<ScriptedSource>();
  ScriptedSource* script = source.get();
  auto monitor =
      LivenessMonitor::Start(FastOptions(&clock, &verdicts), std::move(source));
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  (*monitor)->SetStep(41);
  while (script->last_step() != 41) absl::SleepFor(absl::Milliseconds(5));
  script->set_alive(false);  // rank 1 last seen at step 41
  (*monitor)->SetStep(42);
  EXPECT_FALSE((*monitor)->AwaitVerdict(absl::Milliseconds(50)).has_value());
  clock.Advance(absl::Seconds(31));
  std::optional<std::string> verdict =
      (*monitor)->AwaitVerdict(absl::Seconds(10));
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(*verdict,
            "rank 1 lost: no heartbeat for 31.0 s (last seen at step 41; this "
            "rank at step 42)");
  const int beats = script->beats();
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(script->beats(), beats) << "the loop goes on after its verdict";
  absl::MutexLock lock(&verdicts.mu);
  EXPECT_EQ(verdicts.seen, std::vector<std::string>{*verdict});
}

TEST(LivenessMonitorTest, SourceErrorIsAVerdictAtOnce) {
  FakeClock clock;
  Verdicts verdicts;
  auto source = std::make_unique<ScriptedSource>();
  source->set_error(absl::UnavailableError("server 0 failed the job: x"));
  auto monitor =
      LivenessMonitor::Start(FastOptions(&clock, &verdicts), std::move(source));
  ASSERT_TRUE(monitor.ok());
  std::optional<std::string> verdict =
      (*monitor)->AwaitVerdict(absl::Seconds(10));
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(*verdict, "server 0 failed the job: x");
}

TEST(LivenessMonitorTest, FinishTellsThePeersAndEndsDetection) {
  FakeClock clock;
  Verdicts verdicts;
  auto source = std::make_unique<ScriptedSource>();
  ScriptedSource* script = source.get();
  auto monitor =
      LivenessMonitor::Start(FastOptions(&clock, &verdicts), std::move(source));
  ASSERT_TRUE(monitor.ok());
  while (script->beats() == 0) absl::SleepFor(absl::Milliseconds(5));
  (*monitor)->SetStep(100);
  (*monitor)->Finish();
  EXPECT_EQ(script->finished_at(), 100);
  script->set_alive(false);
  clock.Advance(absl::Hours(1));
  EXPECT_FALSE((*monitor)->AwaitVerdict(absl::Milliseconds(100)).has_value());
  absl::MutexLock lock(&verdicts.mu);
  EXPECT_TRUE(verdicts.seen.empty());
}

TEST(LivenessMonitorTest, RealClockDetectsWithinTimeoutPlusAPeriod) {
  Verdicts verdicts;
  LivenessOptions options;
  options.failure_timeout = absl::Milliseconds(300);
  options.on_verdict = [&verdicts](const std::string& v) {
    absl::MutexLock lock(&verdicts.mu);
    verdicts.seen.push_back(v);
  };
  auto monitor = LivenessMonitor::Start(options, nullptr);
  ASSERT_TRUE(monitor.ok());
  const absl::Time start = absl::Now();
  (*monitor)->tracker().Track(7, "worker rank 7", start);
  std::optional<std::string> verdict =
      (*monitor)->AwaitVerdict(absl::Seconds(10));
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->rfind("worker rank 7 lost: no heartbeat for 0.", 0), 0u)
      << *verdict;
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Milliseconds(300 + 50 + 500));  // + period + slack
}

TEST(LivenessMonitorDeathTest, ExitsWhenNotStoppedAfterTheVerdict) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        LivenessOptions options;
        options.failure_timeout = absl::Milliseconds(100);
        options.exit_after_verdict = absl::Milliseconds(50);
        options.exit_code = 7;
        auto monitor = LivenessMonitor::Start(options, nullptr);
        (*monitor)->tracker().Track(1, "rank 1", absl::Now());
        absl::SleepFor(absl::Seconds(10));  // stuck, e.g. in a collective
      },
      ::testing::ExitedWithCode(7), "rank 1 lost: no heartbeat for");
}

TEST(LivenessMonitorTest, StopCancelsThePendingExit) {
  LivenessOptions options;
  options.failure_timeout = absl::Milliseconds(100);
  options.exit_after_verdict = absl::Seconds(1);
  options.on_verdict = [](const std::string&) {};
  auto monitor = LivenessMonitor::Start(options, nullptr);
  ASSERT_TRUE(monitor.ok());
  (*monitor)->tracker().Track(1, "rank 1", absl::Now());
  ASSERT_TRUE((*monitor)->AwaitVerdict(absl::Seconds(10)).has_value());
  (*monitor)->Stop();  // we are still here afterwards
  absl::SleepFor(absl::Milliseconds(1200));
  SUCCEED();
}

}  // namespace
}  // namespace ringside
