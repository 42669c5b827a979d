// Communication hidden behind compute: the overlap fraction o, and the
// simulation of buckets, fused cycles and phases against the gradients'
// ready times in backward.
#include "experiments/cost/cost_model.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(CostModelTest, OverlapHidesCommunicationBehindCompute) {
  CostInputs in = Round();
  // Ring comm 1.56 s; o = 0.5 hides 0.5 · t_c = 0.5 s: exposed 1.06 s.
  in.overlap = 0.5;
  Prediction p = Predict("ring", in);
  EXPECT_NEAR(p.comm_s, 1.56, kEps);
  EXPECT_NEAR(p.exposed_comm_s, 1.06, kEps);
  EXPECT_NEAR(p.step_s, 2.06, kEps);
  // M = 1e8 (M/B = 0.1 s), n = 2, b_r = 1 + ⌈(1e8 − 1 MiB) / 25 MiB⌉ = 5
  // buckets: ring comm = 2·1/2·0.1 + 5·2·1e-3 = 0.11 s ≤ 0.5 s: all
  // hidden, step = t_c, speedup = 2.
  in.model_bytes = 1e8;
  in.workers = 2;
  p = Predict("ring", in);
  EXPECT_NEAR(p.comm_s, 0.11, kEps);
  EXPECT_NEAR(p.exposed_comm_s, 0, kEps);
  EXPECT_NEAR(p.step_s, 1.0, kEps);
  EXPECT_NEAR(p.speedup, 2.0, kEps);
}

TEST(CostModelTest, OverlapNeverHidesTheCpuTerms) {
  // sps, n = 4: link 4·1 + 0.002 s, CPU 0.902 s; o = 1 with t_c = 5 s
  // hides the link terms only.
  CostInputs in = Round();
  in.cpu = RoundCpu();
  in.overlap = 1;
  in.compute_s = 5;
  const Prediction p = Predict("sps", in);
  EXPECT_NEAR(p.cpu_s, 0.902, 1e-9);
  EXPECT_NEAR(p.exposed_comm_s, 0.902, 1e-9);
  EXPECT_NEAR(p.step_s, 5.902, 1e-9);
}

// Overlap with backward from the gradients' ready times: n = 2, M = 1e9 in
// ten tensors of 1e8 bytes, ready at 0.1, 0.2, ..., 1.0 s; no latency,
// no CPU terms, so a ring's 2(n−1)/n · M/B = 1 s is 0.1 s per tensor.
CostInputs TenTensorsInBackward() {
  CostInputs in = Round();
  in.workers = 2;
  in.latency_s = 0;
  in.bucket_bytes = 0;  // one all-reduce per tensor
  for (int k = 1; k <= 10; ++k) in.gradient_ready.push_back({1e8, 0.1 * k});
  return in;
}

TEST(CostModelTest, RingBucketsOverlapBackwardByReadyTimes) {
  // Each tensor's 0.1 s all-reduce starts as it becomes ready and ends as
  // the next one does; the last, ready at 1.0 s, ends at 1.1 s: 0.1 s
  // exposed, 0.9 s hidden; step 1.1 s. Without the schedule, o = 0: 2 s.
  const Prediction p = Predict("ring", TenTensorsInBackward());
  EXPECT_NEAR(p.comm_s, 1.0, kEps);
  EXPECT_NEAR(p.exposed_comm_s, 0.1, kEps);
  EXPECT_NEAR(p.backward_hidden_s, 0.9, kEps);
  EXPECT_NEAR(p.step_s, 1.1, kEps);
  CostInputs none = TenTensorsInBackward();
  none.gradient_ready.clear();
  EXPECT_NEAR(Predict("ring", none).step_s, 2.0, kEps);
}

TEST(CostModelTest, RealComputeOnLoopbackHidesNoBytes) {
  // On loopback the link's seconds are the cores' copies, which real
  // compute needs: nothing of the 1 s hides (α = 0); emulated compute,
  // which sleeps, leaves the cores to them.
  CostInputs in = TenTensorsInBackward();
  in.cpu_streams_with_link = false;
  EXPECT_NEAR(Predict("ring", in).step_s, 2.0, kEps);
  in.compute_emulated = true;
  EXPECT_NEAR(Predict("ring", in).step_s, 1.1, kEps);
}

TEST(CostModelTest, RingBucketsWaitForTheirLastTensor) {
  // Buckets of 5e8 bytes (first cap too): ready at 0.5 and 1.0 s, 0.5 s
  // each: the second ends at 1.5 s, exposed 0.5 s.
  CostInputs in = TenTensorsInBackward();
  in.bucket_bytes = 5e8;
  in.first_bucket_bytes = 5e8;
  EXPECT_NEAR(Predict("ring", in).exposed_comm_s, 0.5, kEps);
}

TEST(CostModelTest, Zero2OverlapsItsReduceScatterOnly) {
  // Its 1 s (two phases) splits: the reduce-scatter's 0.5 s runs in the
  // buckets (0.05 s per tensor, 0.05 s past backward), the all-gather's
  // 0.5 s after the optimizer: exposed 0.55 s.
  const Prediction p = Predict("zero2", TenTensorsInBackward());
  EXPECT_NEAR(p.comm_s, 1.0, kEps);
  EXPECT_NEAR(p.exposed_comm_s, 0.55, kEps);
}

TEST(CostModelTest, FusionCyclesGatherWhatIsReady) {
  // τ = 0.25 s, one fused call per cycle (F = 10 GB): the first cycle at
  // 0.1 + 0.25 = 0.35 s takes the three tensors ready by then (0.3 s, to
  // 0.65); the next at max(0.6, 0.65) the three of 0.4-0.6 (to 0.95); then
  // 0.7-0.9 (to 1.25); then the last (to 1.35): 0.35 s past backward, τ
  // not added again.
  CostInputs in = TenTensorsInBackward();
  in.cycle_s = 0.25;
  in.fusion_threshold_bytes = 1e10;
  const Prediction p = Predict("fusion", in);
  EXPECT_NEAR(p.exposed_comm_s, 0.35, kEps);
  EXPECT_NEAR(p.step_s, 1.35, kEps);
}

TEST(CostModelTest, StrategiesThatWaitForBackwardHideNothingWithASchedule) {
  // zero1 all-reduces after backward: with a schedule o is not used.
  CostInputs in = TenTensorsInBackward();
  in.overlap = 0.5;
  const Prediction p = Predict("zero1", in);
  EXPECT_NEAR(p.exposed_comm_s, p.comm_s, kEps);
  EXPECT_NEAR(p.backward_hidden_s, 0, kEps);
  in.gradient_ready.clear();  // without one, o = 0.5 hides 0.5 s
  EXPECT_NEAR(Predict("zero1", in).exposed_comm_s, p.comm_s - 0.5, kEps);
}

TEST(CostModelTest, ReadyTimesMustBeInOrder) {
  CostInputs in = TenTensorsInBackward();
  std::swap(in.gradient_ready[2], in.gradient_ready[5]);
  absl::StatusOr<Prediction> p = PredictStep("ring", in);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("gradient_ready[3].ready_s"));
}

TEST(CostModelTest, ProportionalScheduleFollowsTheBytesBackwardProduced) {
  // A forward of 1/3 of 3 s, then ready at 1 + 2 · (1/4) and 1 + 2 · 1.
  const std::vector<GradientReady> s = ProportionalReadySchedule({1, 3}, 3.0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].ready_s, 1.5, kEps);
  EXPECT_NEAR(s[1].ready_s, 3.0, kEps);
  EXPECT_NEAR(s[1].bytes, 3, kEps);
}

// What nominal terms miss: the hidden communication slows the compute by
// σ (ring, o = 0.5: 0.5 s hidden, σ = 0.2 → 0.1 s) and the framework's
// fixed cost f = 10 ms a step, both at n > 1 only; with a schedule the
// hidden seconds are the simulated calls'.
TEST(CostModelTest, ContentionAndTheFrameworksFixedCostAddToTheStep) {
  CostInputs in = Round();
  in.overlap = 0.5;
  const Prediction plain = Predict("ring", in);
  in.compute_slowdown = 0.2;
  in.sync_fixed_s = 0.01;
  const Prediction p = Predict("ring", in);
  EXPECT_NEAR(p.contention_s, 0.2 * 0.5, kEps);
  EXPECT_NEAR(p.sync_fixed_s, 0.01, kEps);
  EXPECT_NEAR(p.step_s, plain.step_s + 0.11, kEps);
  // Nothing hidden (o = 0): no contention, the fixed cost still.
  in.overlap = 0;
  EXPECT_NEAR(Predict("ring", in).contention_s, 0.0, kEps);
  EXPECT_NEAR(Predict("ring", in).sync_fixed_s, 0.01, kEps);
  // One worker synchronizes nothing.
  in.workers = 1;
  EXPECT_NEAR(Predict("ring", in).step_s, in.compute_s, kEps);
  // A schedule: σ times the calls' hidden seconds.
  in.workers = 4;
  in.overlap = 0;
  in.gradient_ready = {{5e8, 0.5}, {5e8, 1.0}};
  const Prediction scheduled = Predict("ring", in);
  EXPECT_GT(scheduled.backward_hidden_s, 0);
  EXPECT_NEAR(scheduled.contention_s,
              0.2 * std::min(scheduled.backward_hidden_s, in.compute_s),
              kEps);
  in.compute_slowdown = -0.1;
  EXPECT_FALSE(PredictStep("ring", in).ok());
}

}  // namespace
}  // namespace ringside
