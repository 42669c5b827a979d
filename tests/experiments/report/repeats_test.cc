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

}  // namespace
}  // namespace ringside
