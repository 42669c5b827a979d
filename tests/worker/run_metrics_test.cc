#include "worker/run_metrics.h"

#include "gtest/gtest.h"

namespace ringside {
namespace {

StepRecord Step(int64_t step, double step_s, double compute_s) {
  StepRecord r;
  r.step = step;
  r.step_s = step_s;
  r.compute_s = compute_s;
  return r;
}

// Steps of 1 s from t = 0, the first one warm-up; a 5 s pause (an
// evaluation) between steps 2 and 3 and another after the last step.
TEST(RunMetricsTest, PausesBetweenMeasuredStepsLeaveTheWallTime) {
  RunMetrics m(/*global_batch=*/10, /*warmup_steps=*/1);
  m.Add(Step(0, 1, 0.5), 0);
  m.Pause(7);  // before the first measured step: outside the measure anyway
  m.Add(Step(1, 1, 0.5), 8);
  m.Add(Step(2, 1, 0.5), 9);
  m.Pause(5);
  m.Add(Step(3, 1, 0.5), 15);
  m.Pause(3);  // after the last step: nothing follows it
  EXPECT_EQ(m.measured_steps(), 3);
  EXPECT_DOUBLE_EQ(m.wall_s(), 3.0);  // 8..16, less the 5 s pause
  EXPECT_DOUBLE_EQ(m.utilization(), 0.5);
  EXPECT_DOUBLE_EQ(m.throughput(), 10.0);
}

// The compute's CPU time sums over the measured steps, and is unknown (−1)
// once any measured step's is; a warm-up step's does not count.
TEST(RunMetricsTest, ComputeCpuTimeIsKnownOnlyWhenEveryMeasuredStepsIs) {
  RunMetrics m(/*global_batch=*/10, /*warmup_steps=*/1);
  EXPECT_EQ(m.compute_cpu_s(), -1);  // no measured step yet
  StepRecord warmup = Step(0, 1, 0.5);  // compute_cpu_s −1: unknown
  m.Add(warmup, 0);
  StepRecord a = Step(1, 1, 0.5);
  a.compute_cpu_s = 0.25;
  StepRecord b = Step(2, 1, 0.5);
  b.compute_cpu_s = 0.5;
  m.Add(a, 1);
  m.Add(b, 2);
  EXPECT_DOUBLE_EQ(m.compute_cpu_s(), 0.75);
  m.Add(Step(3, 1, 0.5), 3);  // unknown
  EXPECT_EQ(m.compute_cpu_s(), -1);
}

}  // namespace
}  // namespace ringside
