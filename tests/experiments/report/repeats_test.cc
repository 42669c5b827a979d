#include "experiments/report/repeats.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using testing::NamedRow;

ReportRow TimedRun(double step_s, double throughput) {
  ReportRow row = NamedRow("ring");
  row.step_s = step_s;
  row.throughput = throughput;
  return row;
}

TEST(MedianRunTest, TakesTheMedianRunWholeAndKeepsEveryStepInOrder) {
  const ReportRow median =
      MedianRun({TimedRun(0.015, 100), TimedRun(0.011, 300), TimedRun(0.012, 200)});
  EXPECT_DOUBLE_EQ(median.step_s, 0.012);
  EXPECT_DOUBLE_EQ(median.throughput, 200);  // that run's, not a mean
  EXPECT_EQ(median.run_step_s, (std::vector<double>{0.015, 0.011, 0.012}));
  EXPECT_EQ(median.run_throughput, (std::vector<double>{100, 300, 200}));
  EXPECT_EQ(median.run_total_utilization.size(), 3u);
  // (300 − 100) / 200: marked wide.
  ASSERT_TRUE(ThroughputSpread(median).has_value());
  EXPECT_DOUBLE_EQ(*ThroughputSpread(median), 1.0);
  EXPECT_FALSE(ThroughputSpread(TimedRun(0.01, 100)).has_value());
}

// The study table of repeated rows: the median run's throughput, the
// slowest and fastest run's, and the spread, "(wide)" over 10%.
TEST(MedianRunTest, RepeatedRowsShowTheirRangeAndSpreadInTheTable) {
  ReportRow base = MedianRun({TimedRun(0.0100, 100), TimedRun(0.0096, 104),
                              TimedRun(0.0098, 102)});
  base.strategy = "baseline";
  base.display_name = "Baseline";
  base.utilization = {0.9};
  ReportRow ring =
      MedianRun({TimedRun(0.0213, 150), TimedRun(0.0178, 180),
                 TimedRun(0.0200, 160)});
  ring.utilization = {0.5, 0.5};
  const std::string md = MarkdownTable({base, ring});
  EXPECT_NE(md.find("| Throughput, median run (samples/s) | Runs: "
                    "slowest–fastest |     Spread |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(" 102.0 |  100.0–104.0 (3 runs) |         4% |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(" 160.0 |  150.0–180.0 (3 runs) | 19% (wide) |"),
            std::string::npos)
      << md;
}

TEST(MedianRunTest, EvenCountTakesTheFasterMiddleRun) {
  const ReportRow median = MedianRun(
      {TimedRun(0.020, 1), TimedRun(0.010, 4), TimedRun(0.014, 3), TimedRun(0.016, 2)});
  EXPECT_DOUBLE_EQ(median.step_s, 0.014);
}

TEST(MedianRunTest, ARunWithoutAStepTimeCountsAsSlowest) {
  EXPECT_DOUBLE_EQ(MedianRun({TimedRun(0, 1), TimedRun(0.02, 2), TimedRun(0.01, 3)}).step_s,
                   0.02);
}

TEST(MedianRunTest, OneRunIsItselfWithNoRunList) {
  const ReportRow once = MedianRun({TimedRun(0.013, 7)});
  EXPECT_DOUBLE_EQ(once.step_s, 0.013);
  EXPECT_TRUE(once.run_step_s.empty());
  EXPECT_DOUBLE_EQ(RunSpread(once.run_step_s), 1.0);
}

TEST(RunSpreadTest, SlowestOverFastestIgnoringRunsWithoutAStep) {
  ReportRow row = TimedRun(0.012, 1);
  row.run_step_s = {0.012, 0.015, 0, 0.010};
  EXPECT_DOUBLE_EQ(RunSpread(row.run_step_s), 1.5);
}

// The window covers min_window_s at the training run's step, never fewer
// than min_steps, never more than kMaxTimingSteps.
TEST(TimingWindowStepsTest, CoversTheWindowAndTheMinimumSteps) {
  EXPECT_EQ(TimingWindowSteps(0.005, 2.0, 30), 400);  // 2 s at 5 ms
  EXPECT_EQ(TimingWindowSteps(0.0051, 2.0, 30), 393);  // rounded up
  EXPECT_EQ(TimingWindowSteps(0.2, 2.0, 30), 30);      // 10 steps < 30
  EXPECT_EQ(TimingWindowSteps(0, 2.0, 30), 30);        // not measured
  EXPECT_EQ(TimingWindowSteps(0.005, 0, 30), 30);      // no window asked
  EXPECT_EQ(TimingWindowSteps(1e-9, 2.0, 30), kMaxTimingSteps);
  EXPECT_EQ(TimingWindowSteps(0.005, 2.0, 0), 400);
  EXPECT_EQ(TimingWindowSteps(0, 0, 0), 1);
}

// The table's row is the timing run's, with the training run's loss.
TEST(WithTrainingRunTest, TakesTheLossFromTheTrainingRunAndTheRestFromTiming) {
  ReportRow timing = TimedRun(0.010, 400);
  timing.run_step_s = {0.010, 0.011};
  ReportRow training = TimedRun(0.020, 150);
  training.eval_loss = 1.25;
  training.curve = {EvalPoint{4, 128, 0.1, 2.0}, EvalPoint{9, 256, 0.2, 1.25}};
  training.time_to_target_s = 0.2;
  const ReportRow row = WithTrainingRun(timing, training);
  EXPECT_DOUBLE_EQ(row.step_s, 0.010);
  EXPECT_DOUBLE_EQ(row.throughput, 400);
  EXPECT_EQ(row.run_step_s, timing.run_step_s);
  ASSERT_TRUE(row.eval_loss.has_value());
  EXPECT_DOUBLE_EQ(*row.eval_loss, 1.25);
  ASSERT_EQ(row.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(row.curve[1].loss, 1.25);
  ASSERT_TRUE(row.time_to_target_s.has_value());
  EXPECT_DOUBLE_EQ(*row.time_to_target_s, 0.2);
}

}  // namespace
}  // namespace ringside
