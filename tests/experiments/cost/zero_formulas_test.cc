// The ZeRO stages' formulas on hand-worked cases: their collectives'
// bytes and latencies, the ring's critical bytes when a run reports them
// (and the per-unit layout, where they are the balanced figure), and
// zero3's refaulted pages.
#include "experiments/cost/cost_model.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

TEST(CostModelTest, ZeroStagesMoveAnAllReducePlusAnAllGather) {
  // zero1: all-reduce + all-gather = 3(n−1)/n · M/B + 3(n−1)α
  //   = 3·3/4 · 1 + 9 · 1e-3 = 2.25 + 0.009 s.
  const Prediction z1 = Predict("zero1", Round());
  EXPECT_NEAR(z1.bandwidth_s, 2.25, kEps);
  EXPECT_NEAR(z1.latency_s, 0.009, kEps);
  EXPECT_NEAR(z1.step_s, 1 + 2.259, kEps);
  EXPECT_EQ(z1.servers, 0);
  // zero2: reduce-scatter + all-gather = an all-reduce's bytes, once over
  // the whole buffer: 1.5 + 6 · 1e-3 s (ring pays T = 10 latencies).
  const Prediction z2 = Predict("zero2", Round());
  EXPECT_NEAR(z2.bandwidth_s, 1.5, kEps);
  EXPECT_NEAR(z2.latency_s, 0.006, kEps);
  // zero3: per tensor two all-gathers and a reduce-scatter:
  // 3(n−1)/n · M/B + T · 3(n−1)α = 2.25 + 10 · 9 · 1e-3 s.
  const Prediction z3 = Predict("zero3", Round());
  EXPECT_NEAR(z3.bandwidth_s, 2.25, kEps);
  EXPECT_NEAR(z3.latency_s, 0.09, kEps);
  // zero3's units of --zero3_unit_kb: M = 1e9 B in units of 250,000 KiB
  // is U = 4 units (of T = 10 tensors), 4 · 9 latencies; at 0, one per
  // tensor.
  CostInputs units = Round();
  units.strategy_options["zero3_unit_kb"] = "250000";
  EXPECT_NEAR(Predict("zero3", units).latency_s, 0.036, kEps);
  EXPECT_NEAR(Predict("zero3", units).bandwidth_s, 2.25, kEps);
  units.strategy_options["zero3_unit_kb"] = "0";
  EXPECT_NEAR(Predict("zero3", units).latency_s, 0.09, kEps);
  CostInputs one = Round();
  one.workers = 1;
  EXPECT_NEAR(Predict("zero1", one).comm_s, 0, kEps);
  EXPECT_NEAR(Predict("zero2", one).comm_s, 0, kEps);
  EXPECT_NEAR(Predict("zero3", one).comm_s, 0, kEps);
}

TEST(CostModelTest, ZeroStagesTakeTheRingsCriticalBytesWhenReported) {
  // n = 4, B = 1e9 B/s: a run that reports 2.5e9 critical bytes a step
  // spends 2.5 s on the link, whatever the balanced formula says — for
  // zero1, and for zero2 and zero3 in the contiguous layout.
  CostInputs in = Round();
  in.ring_critical_bytes = 2.5e9;
  in.strategy_options["zero_layout"] = "contiguous";
  for (const char* s : {"zero1", "zero2", "zero3"}) {
    EXPECT_NEAR(Predict(s, in).bandwidth_s, 2.5, kEps) << s;
  }
  EXPECT_NEAR(Predict("ring", in).bandwidth_s, 1.5, kEps);  // not ring's
  // Per unit (the default), every rank sends (n−1)/n of every unit: the
  // balanced figure, whatever the run reported.
  for (const char* layout : {"per_unit", ""}) {
    if (*layout == '\0') {
      in.strategy_options.erase("zero_layout");
    } else {
      in.strategy_options["zero_layout"] = layout;
    }
    EXPECT_NEAR(Predict("zero2", in).bandwidth_s, 1.5, kEps) << layout;
    EXPECT_NEAR(Predict("zero3", in).bandwidth_s, 2.25, kEps) << layout;
  }
  in.ring_critical_bytes = -1;
  EXPECT_FALSE(PredictStep("zero2", in).ok());
}

// zero3's two all-gathers write the other ranks' (n−1)/n of M into pages
// it gave back: 2 · 3/4 · 1e9 · f_b; no other strategy gives pages back
// between its collectives.
TEST(CostModelTest, Zero3PaysForRefaultingTheGivenBackPagesItGathersInto) {
  CostInputs in = Round();  // n = 4, M = 1e9
  in.cpu.refault_byte_s = 2e-10;
  for (const std::string& s : CostModelStrategies()) {
    EXPECT_NEAR(Predict(s, in).cpu_s, s == "zero3" ? 0.3 : 0, 1e-12) << s;
  }
  in.workers = 1;  // nothing gathered
  EXPECT_EQ(Predict("zero3", in).cpu_s, 0);
}

}  // namespace
}  // namespace ringside
