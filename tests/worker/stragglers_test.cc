#include "worker/stragglers.h"

#include <gtest/gtest.h>

#include "common/stopwatch.h"

namespace ringside {
namespace {

TEST(StragglersTest, ParsesRanksAndFactors) {
  absl::StatusOr<Stragglers> s = ParseStragglers("1:1.5, 3:2", 0.2, 4, 7);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->any());
  EXPECT_EQ(s->slow_ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(s->slow_ranks.at(1), 1.5);
  EXPECT_EQ(s->Describe(), "rank 1 x1.5; rank 3 x2; jitter ±0.2");
  EXPECT_FALSE(ParseStragglers("", 0, 4, 7)->any());
}

TEST(StragglersTest, RefusesBadValuesNamingThem) {
  auto message = [](const std::string& ranks, double jitter) {
    absl::StatusOr<Stragglers> s = ParseStragglers(ranks, jitter, 4, 1);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << ranks;
    return std::string(s.status().message());
  };
  EXPECT_NE(message("4:1.5", 0).find("outside [0, 4)"), std::string::npos);
  EXPECT_NE(message("-1:1.5", 0).find("outside"), std::string::npos);
  EXPECT_NE(message("1:0", 0).find("must be > 0"), std::string::npos);
  EXPECT_NE(message("1:-2", 0).find("must be > 0"), std::string::npos);
  EXPECT_NE(message("1:1.5,1:2", 0).find("twice"), std::string::npos);
  EXPECT_NE(message("1", 0).find("RANK:FACTOR"), std::string::npos);
  EXPECT_NE(message("a:b", 0).find("RANK:FACTOR"), std::string::npos);
  EXPECT_NE(message("", 1.0).find("--compute_jitter"), std::string::npos);
  EXPECT_NE(message("", -0.1).find("--compute_jitter"), std::string::npos);
}

TEST(StragglersTest, SlowRanksWithinKeepsTheRanksOfASmallerRun) {
  EXPECT_EQ(SlowRanksWithin("1:1.5,3:2", 4), "1:1.5,3:2");
  EXPECT_EQ(SlowRanksWithin("1:1.5,3:2", 2), "1:1.5");
  EXPECT_EQ(SlowRanksWithin("1:1.5,3:2", 1), "");
  EXPECT_EQ(SlowRanksWithin("", 4), "");
  EXPECT_EQ(SlowRanksWithin("x:2", 1), "x:2");  // left for the worker to refuse
}

// The jitter stays within ±J around F, repeats for the same seed, rank and
// step, and differs between steps and ranks.
TEST(StragglersTest, JitterIsBoundedSeededAndVaries) {
  Stragglers s = *ParseStragglers("0:1.5", 0.2, 2, 11);
  double lo = 10, hi = 0;
  for (int64_t step = 0; step < 200; ++step) {
    const double f = s.Factor(0, step);
    EXPECT_EQ(f, s.Factor(0, step));
    lo = std::min(lo, f);
    hi = std::max(hi, f);
    EXPECT_GE(s.Factor(1, step), 0.8);
    EXPECT_LT(s.Factor(1, step), 1.2);
  }
  EXPECT_GE(lo, 1.5 * 0.8);
  EXPECT_LT(hi, 1.5 * 1.2);
  EXPECT_LT(lo, 1.4);  // it does vary
  EXPECT_GT(hi, 1.6);
  EXPECT_NE(s.Factor(0, 3), s.Factor(1, 3));
  Stragglers other = *ParseStragglers("0:1.5", 0.2, 2, 12);
  EXPECT_NE(s.Factor(0, 3), other.Factor(0, 3));
}

// A factor of 3 turns 20 ms of "compute" before the one gradient event into
// 60 ms, the strategy's own time unstretched.
TEST(StragglersTest, StretchWaitsInProportion) {
  ComputeStretch stretch;
  const double start = NowSeconds();
  stretch.BeginPass(3.0, start);
  int calls = 0;
  GradientReadyFn ready = stretch.Wrap([&calls](int) { ++calls; });
  SleepUntil(start + 0.02);
  ready(0);
  const double after = NowSeconds();
  EXPECT_EQ(calls, 1);
  EXPECT_GE(after - start, 0.06);
  EXPECT_GE(stretch.waited_s(), 0.04);
  // The tail: (factor - 1) x the time since the pass start when no event
  // came.
  stretch.BeginPass(2.0, after);
  EXPECT_NEAR(stretch.EndPass(after + 0.01), 0.01, 1e-9);
  // A factor <= 1 never waits and passes the callback through.
  stretch.BeginPass(0.8, NowSeconds());
  EXPECT_EQ(stretch.EndPass(NowSeconds() + 1), 0);
  EXPECT_FALSE(stretch.Wrap(GradientReadyFn()));
}

}  // namespace
}  // namespace ringside
