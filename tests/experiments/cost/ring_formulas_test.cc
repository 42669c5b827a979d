// The all-reduce family's formulas on hand-worked cases: baseline, ring
// (DDP's buckets), ring_fp16, hierarchical, fusion, local_sgd and diloco,
// at one worker and without latency too.
#include "experiments/cost/cost_model.h"

#include <string>

#include "experiments/cost/formulas/formula_registry.h"
#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

TEST(CostModelTest, BaselineIsComputeOnlyWithOneWorker) {
  // Whatever n says, the baseline is one worker: step = t_c = 1 s.
  const Prediction p = Predict("baseline", Round());
  EXPECT_EQ(p.workers, 1);
  EXPECT_NEAR(p.comm_s, 0, kEps);
  EXPECT_NEAR(p.step_s, 1.0, kEps);
  EXPECT_NEAR(p.utilization, 1.0, kEps);
  EXPECT_NEAR(p.speedup, 1.0, kEps);
  EXPECT_NEAR(p.scaling_efficiency, 1.0, kEps);
}

TEST(CostModelTest, RingPerTensor) {
  // bandwidth: 2(n−1)/n · M/B = 2·3/4 · 1 = 1.5 s
  // latency:   T · 2(n−1)α    = 10 · 6 · 1e-3 = 0.06 s
  // step = 1 + 1.56 = 2.56 s; utilization = 1/2.56 = 0.390625;
  // speedup = 4 · 1 / 2.56 = 1.5625; efficiency = 1.5625/4 = 0.390625.
  const Prediction p = Predict("ring", Round());
  EXPECT_EQ(p.workers, 4);
  EXPECT_EQ(p.servers, 0);
  EXPECT_NEAR(p.bandwidth_s, 1.5, kEps);
  EXPECT_NEAR(p.latency_s, 0.06, kEps);
  EXPECT_NEAR(p.overhead_s, 0, kEps);
  EXPECT_NEAR(p.comm_s, 1.56, kEps);
  EXPECT_NEAR(p.exposed_comm_s, 1.56, kEps);
  EXPECT_NEAR(p.step_s, 2.56, kEps);
  EXPECT_NEAR(p.utilization, 0.390625, kEps);
  EXPECT_NEAR(p.speedup, 1.5625, kEps);
  EXPECT_NEAR(p.scaling_efficiency, 0.390625, kEps);
}

// ring all-reduces DDP's buckets, not each tensor: with T = 100 tensors of
// a 1e9-byte model, b_r = 1 + ⌈(1e9 − 1 MiB) / 25 MiB⌉ = 1 + 39 = 40
// all-reduces, 40 · 6 · 1 ms = 0.24 s of latency; buckets off (0): T.
TEST(CostModelTest, RingAllReducesDdpBuckets) {
  CostInputs in = Round();
  in.num_tensors = 100;
  EXPECT_NEAR(Predict("ring", in).latency_s, 0.24, kEps);
  EXPECT_NEAR(Predict("ring", in).bandwidth_s, 1.5, kEps);
  in.bucket_bytes = 0;
  EXPECT_NEAR(Predict("ring", in).latency_s, 0.6, kEps);
  // A model inside the first bucket: one all-reduce.
  in = Round();
  in.model_bytes = 1e6;
  EXPECT_NEAR(Predict("ring", in).latency_s, 0.006, kEps);
  in.bucket_bytes = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(PredictStep("ring", in).status()));
}

TEST(CostModelTest, RingFp16HalvesTheBytesAndAllReducesRingsBuckets) {
  // bandwidth: 2·3/4 · (M/2)/B = 0.75 s; latency: b_r · 2·3 · α with
  // ring's buckets, min(T = 10, 40) = 10: 0.06 s; memory as ring.
  CostInputs in = Round();
  const Prediction p = Predict("ring_fp16", in);
  EXPECT_NEAR(p.bandwidth_s, 0.75, kEps);
  EXPECT_NEAR(p.latency_s, 0.06, kEps);
  // T = 100: b_r = 40 buckets (RingAllReducesDdpBuckets), as ring.
  in.num_tensors = 100;
  EXPECT_NEAR(Predict("ring_fp16", in).latency_s, 0.24, kEps);
  in.num_tensors = 10;
  EXPECT_NEAR(p.worker_memory_bytes, Predict("ring", in).worker_memory_bytes,
              kEps);
  in.workers = 1;
  EXPECT_NEAR(Predict("ring_fp16", in).comm_s, 0, kEps);
}

TEST(CostModelTest, FusionFusedAllReducesPlusOneCycle) {
  // b = min(T, ⌈M/F⌉) = min(10, ⌈1e9/3e8⌉ = ⌈3.33⌉ = 4) = 4
  // bandwidth: 1.5 s (as ring)
  // latency:   (b + 1 control) · 2(n−1)α = 5 · 6e-3 = 0.03 s
  // overhead:  τ = 0.01 s
  // comm = 1.54 s; step = 2.54 s; speedup = 4/2.54.
  const Prediction p = Predict("fusion", Round());
  EXPECT_NEAR(p.bandwidth_s, 1.5, kEps);
  EXPECT_NEAR(p.latency_s, 0.03, kEps);
  EXPECT_NEAR(p.overhead_s, 0.01, kEps);
  EXPECT_NEAR(p.comm_s, 1.54, kEps);
  EXPECT_NEAR(p.step_s, 2.54, kEps);
  EXPECT_NEAR(p.speedup, 4 / 2.54, kEps);
}

TEST(CostModelTest, FusionBatchCountBounds) {
  CostInputs in = Round();
  // F ≥ M: one fused all-reduce; latency (1 + 1) · 6e-3 = 0.012 s.
  in.fusion_threshold_bytes = 2e9;
  EXPECT_NEAR(Predict("fusion", in).latency_s, 0.012, kEps);
  // F = 0 (fusion off): b = T = 10; latency (10 + 1) · 6e-3 = 0.066 s.
  in.fusion_threshold_bytes = 0;
  EXPECT_NEAR(Predict("fusion", in).latency_s, 0.066, kEps);
  // F = 1 byte: ⌈M/F⌉ = 1e9, but tensors are not split: b = T = 10.
  in.fusion_threshold_bytes = 1;
  EXPECT_NEAR(Predict("fusion", in).latency_s, 0.066, kEps);
}

// hierarchical with r ranks per host and h = ⌈n/r⌉ hosts, per bucket
// (ring's b_r): a reduce-scatter and an all-gather within the host
// (2(r−1)/r · M/B_i, 2(r−1)α_i per bucket) and an all-reduce of each
// rank's shard across hosts (2(h−1)/h · M/B through the host's link,
// 2(h−1)α per bucket).
TEST(CostModelTest, HierarchicalSplitsIntraAndInterHostLinks) {
  CostInputs in = Round();  // n = 4, M/B = 1 s, α = 1 ms, T = 10
  // One host (r = 0: all four): the cross-host term vanishes, B_i = B; a
  // reduce-scatter and an all-gather are ring's all-reduce, 2·3/4.
  Prediction one = Predict("hierarchical", in);
  EXPECT_NEAR(one.bandwidth_s, 2.0 * 3 / 4, kEps);
  EXPECT_NEAR(one.latency_s, 10 * (2.0 * 3) * 1e-3, kEps);
  // T = 100 tensors in b_r = 40 buckets: 40 rounds of the same messages.
  in.num_tensors = 100;
  EXPECT_NEAR(Predict("hierarchical", in).latency_s, 40 * (2.0 * 3) * 1e-3,
              kEps);
  in.num_tensors = 10;
  // 2 hosts × 2 ranks, the intra-host link 10× faster with α_i = 0.1 ms:
  // 2·(1/2)·0.1 + 2·(1/2)·1 = 1.1 s; 10·(2·1e-4 + 2·1e-3) = 0.022 s.
  in.ranks_per_host = 2;
  in.intra_bandwidth_Bps = 1e10;
  in.intra_latency_s = 1e-4;
  Prediction two = Predict("hierarchical", in);
  EXPECT_NEAR(two.bandwidth_s, 1.1, kEps);
  EXPECT_NEAR(two.latency_s, 0.022, kEps);
  EXPECT_NEAR(two.step_s, 1.0 + 1.122, kEps);
  // One rank per host: a flat all-reduce among the n hosts, which is ring's
  // bandwidth term.
  in.ranks_per_host = 1;
  EXPECT_NEAR(Predict("hierarchical", in).bandwidth_s,
              Predict("ring", in).bandwidth_s, kEps);
  // One worker does not communicate; memory as ring.
  in.workers = 1;
  EXPECT_NEAR(Predict("hierarchical", in).comm_s, 0.0, kEps);
  EXPECT_EQ(MemoryFormula("hierarchical"), "(2 + s)·P");
}

// One worker: ring does not communicate; ring_fp16 still converts its
// buffer, and fusion's background thread still cycles, so its step waits
// one cycle τ.
TEST(CostModelTest, OneWorkerRingIsFreeRingFp16ConvertsFusionCycles) {
  CostInputs in = Round();
  in.workers = 1;
  const Prediction ring = Predict("ring", in);
  EXPECT_NEAR(ring.comm_s, 0, kEps);
  EXPECT_NEAR(ring.step_s, 1.0, kEps);
  EXPECT_NEAR(ring.speedup, 1.0, kEps);
  // ring_fp16 converts its whole buffer at n = 1 too: M · v_h (1e9 B at
  // 0.2 ns/B: 0.2 s), with nothing on the wire.
  in.cpu.half_convert_byte_s = 2e-10;
  const Prediction fp16 = Predict("ring_fp16", in);
  EXPECT_NEAR(fp16.cpu_s, 0.2, kEps);
  EXPECT_NEAR(fp16.bandwidth_s, 0, kEps);
  EXPECT_NEAR(fp16.step_s, 1.2, kEps);
  in.workers = 2;  // at n > 1 a_h holds them: v_h adds nothing
  EXPECT_NEAR(Predict("ring_fp16", in).cpu_s, 0, kEps);
  in.workers = 1;
  in.cycle_s = 0.25;
  const Prediction fusion = Predict("fusion", in);
  EXPECT_NEAR(fusion.comm_s, 0.25, kEps);
  EXPECT_NEAR(fusion.overhead_s, 0.25, kEps);
  EXPECT_NEAR(fusion.step_s, 1.25, kEps);
  // A parameter server still costs one round trip of M: 1 + 0.002 s, and
  // its pipeline 2·1·1e6/1e9 = 0.002 s.
  EXPECT_NEAR(Predict("sps", in).comm_s, 1.004, kEps);
  EXPECT_NEAR(Predict("dps", in).comm_s, 1.004, kEps);
}

TEST(CostModelTest, ZeroLatencyLeavesTheBandwidthTerms) {
  CostInputs in = Round();
  in.latency_s = 0;
  in.cycle_s = 0;
  EXPECT_NEAR(Predict("ring", in).comm_s, 1.5, kEps);
  EXPECT_NEAR(Predict("fusion", in).comm_s, 1.5, kEps);
  EXPECT_NEAR(Predict("sps", in).comm_s, 4.008, kEps);
}

// local_sgd and diloco: one all-reduce of the parameters every H steps.
// With H = 4 (the run's --local_steps): bandwidth 2(n−1)/n · M/B / H =
// 1.5/4 = 0.375 s, latency 2(n−1)α / H = 6 ms / 4 = 1.5 ms a step; the
// strategy's default H = 8 where the run names none; nothing overlaps.
TEST(CostModelTest, LocalSgdAveragesOnceEveryHSteps) {
  CostInputs in = Round();
  in.strategy_options = {{"local_steps", "4"}};
  for (const char* s : {"local_sgd", "diloco"}) {
    const Prediction p = Predict(s, in);
    EXPECT_NEAR(p.bandwidth_s, 0.375, kEps) << s;
    EXPECT_NEAR(p.latency_s, 1.5e-3, kEps) << s;
    EXPECT_NEAR(p.step_s, 1.3765, kEps) << s;
    EXPECT_EQ(UpdatesOf(s, 0), Updates::kLocal) << s;
  }
  in.strategy_options.clear();
  EXPECT_NEAR(Predict("local_sgd", in).bandwidth_s, 1.5 / 8, kEps);
  in.cpu = RoundCpu();
  in.strategy_options = {{"local_steps", "4"}};
  // (2·3/4 · M · a_b + 2(n−1) · c_s) / H = (0.15 + 0.006) / 4.
  EXPECT_NEAR(Predict("local_sgd", in).cpu_s, 0.039, kEps);
  in.workers = 1;
  EXPECT_NEAR(Predict("local_sgd", in).comm_s, 0, kEps);
  EXPECT_EQ(MemoryFormula("local_sgd"), "(3 + s)·P");
  EXPECT_EQ(MemoryFormula("diloco"), "(4 + s)·P");
  EXPECT_EQ(UpdatesLabel("diloco", 0),
            "local (parameters averaged every H steps)");
}

// ring_topk: per bucket an all-gather of k (index, value) pairs a rank:
// with ρ = 0.01, K = 0.01 · M/4 = 2.5e6 pairs = 2e7 bytes a rank, (n−1) ·
// 2e7 / B = 0.06 s; latency b_r · (n−1)α, b_r = min(T, 40 buckets of
// 25 MiB) = 10: 10 · 3 ms = 0.03 s; lossy, "top-k sparsified".
TEST(CostModelTest, RingTopkAllGathersItsPairs) {
  CostInputs in = Round();
  in.strategy_options = {{"topk_ratio", "0.01"}};
  const Prediction p = Predict("ring_topk", in);
  EXPECT_NEAR(p.bandwidth_s, 0.06, kEps);
  EXPECT_NEAR(p.latency_s, 0.03, kEps);
  EXPECT_EQ(UpdatesLabel("ring_topk", 0), "lossy (top-k sparsified)");
  EXPECT_EQ(UpdatesLabel("ring_fp16", 0), "lossy (fp16 gradients)");
  // Ratio 1: every element with its index, (n−1) · 8 · M/4 / B = 6 s
  // against ring's 1.5 s: sparse pairs pay only below 1/(2n) or so.
  in.strategy_options = {{"topk_ratio", "1"}};
  EXPECT_NEAR(Predict("ring_topk", in).bandwidth_s, 6.0, kEps);
  in.workers = 1;
  EXPECT_NEAR(Predict("ring_topk", in).comm_s, 0, kEps);
}

// ring_sign: per bucket an all-gather of the bits and a scale per tensor:
// S = M/32 + 4T = 31 250 040 bytes a rank, (n−1) · S / B = 0.09375012 s;
// latency as ring_topk's (b_r = 10 all-gathers of 3 steps): 0.03 s.
TEST(CostModelTest, RingSignAllGathersBitsAndScales) {
  const Prediction p = Predict("ring_sign", Round());
  EXPECT_NEAR(p.bandwidth_s, 3 * 31250040.0 / 1e9, kEps);
  EXPECT_NEAR(p.latency_s, 0.03, kEps);
  EXPECT_EQ(UpdatesLabel("ring_sign", 0), "lossy (sign, 1 bit)");
}

// ring_onebit_adam's compressed steps move and cost what ring_sign's do
// (the momentum's signs and a scale per tensor), its study's warm-up is 16
// plain steps, and its label says what it compresses.
TEST(CostModelTest, OneBitAdamPricesItsStepsAsSigns) {
  CostInputs in = Round();
  in.cpu.sign_pack_element_s = 2e-11;
  in.cpu.sign_add_element_s = 1e-11;
  const Prediction adam = Predict("ring_onebit_adam", in);
  const Prediction sign = Predict("ring_sign", in);
  EXPECT_NEAR(adam.bandwidth_s, sign.bandwidth_s, kEps);
  EXPECT_NEAR(adam.cpu_s, sign.cpu_s, kEps);
  EXPECT_NEAR(adam.step_s, sign.step_s, kEps);
  EXPECT_EQ(FormulaRegistry::StudyFlag("ring_onebit_adam",
                                       "compression_start_step"),
            "16");
  EXPECT_EQ(UpdatesLabel("ring_onebit_adam", 0),
            "lossy (1-bit Adam: momentum signs)");
}

// The all-gather hooks' compression, calibrated per element and paid at
// every n: top-k's M/4 · p_k = 2.5e8 · 1e-11 = 2.5 ms; sign's M/4 · (p_s +
// n · p_a) = 2.5e8 · (2e-11 + 4 · 1e-11) = 15 ms at n = 4, 7.5 ms at 1.
TEST(CostModelTest, GatherHooksPayTheirCompressionAtEveryN) {
  CostInputs in = Round();
  in.cpu.topk_element_s = 1e-11;
  in.cpu.sign_pack_element_s = 2e-11;
  in.cpu.sign_add_element_s = 1e-11;
  EXPECT_NEAR(Predict("ring_topk", in).cpu_s, 2.5e-3, kEps);
  EXPECT_NEAR(Predict("ring_sign", in).cpu_s, 15e-3, kEps);
  in.workers = 1;
  EXPECT_NEAR(Predict("ring_topk", in).comm_s, 2.5e-3, kEps);
  EXPECT_NEAR(Predict("ring_sign", in).comm_s, 7.5e-3, kEps);
  EXPECT_NEAR(Predict("ring_sign", in).step_s, 1.0075, kEps);
}

// ring_powersgd on a 1000 × 2000 matrix and a bias of 2000 (rank 2, PyTorch's
// minimum compression rate 2): the matrix goes as P and Q, 2 · (1000 +
// 2000) = 6000 floats, the bias whole: E_w = 8000 floats a rank a step.
// Both tensors fill one bucket (8 MB against the first cap of 1 MiB), so
// c_a = 2 all-reduces (P with the bias, then Q).
//   bandwidth 2(n−1)/n · 4E_w / B = 1.5 · 32000 / 1e9 = 4.8e-5 s
//   latency   c_a · 2(n−1)α = 2 · 6 · 1 ms = 0.012 s
//   CPU       3 · 2e6 · 2 = 1.2e7 multiply-adds at p_m = 1e-10 s and the
//             bucket's 2 002 000 elements at p_e = 1e-9 s: 3.202 ms,
//             paid at n = 1 too; n > 1 adds 1.5 · 32000 · a_b + c_a ·
//             2(n−1) · c_s = 4.8e-6 + 0.012 s
TEST(CostModelTest, RingPowerSgdSendsTheFactorsAndPaysItsProducts) {
  CostInputs in = Round();
  in.tensor_shapes = {{1000, 2000}, {2000}};
  in.cpu = RoundCpu();
  in.cpu.lowrank_multiply_add_s = 1e-10;
  in.cpu.error_feedback_element_s = 1e-9;
  Prediction p = Predict("ring_powersgd", in);
  EXPECT_NEAR(p.bandwidth_s, 4.8e-5, kEps);
  EXPECT_NEAR(p.latency_s, 0.012, kEps);
  EXPECT_NEAR(p.streamed_cpu_s, 4.8e-6 + 0.012, kEps);
  EXPECT_NEAR(p.cpu_s, 3.202e-3 + 4.8e-6 + 0.012, kEps);
  EXPECT_EQ(UpdatesLabel("ring_powersgd", 0), "lossy (PowerSGD, low rank)");
  EXPECT_EQ(MemoryFormula("ring_powersgd"), "(3 + s)·P");
  // One worker: no wire, the compression still runs.
  in.workers = 1;
  p = Predict("ring_powersgd", in);
  EXPECT_NEAR(p.comm_s, 3.202e-3, kEps);
  EXPECT_NEAR(p.step_s, 1.003202, kEps);
  // A rank the matrix cannot pay for (1000 · 3000 · 2 > 2e6 elements):
  // sent whole, as ring sends it, in one all-reduce.
  in.workers = 4;
  in.strategy_options = {{"powersgd_rank", "1000"}};
  p = Predict("ring_powersgd", in);
  EXPECT_NEAR(p.bandwidth_s, 1.5 * 4 * 2002000 / 1e9, kEps);
  EXPECT_NEAR(p.latency_s, 0.006, kEps);
  EXPECT_NEAR(p.cpu_s - p.streamed_cpu_s, 0, kEps);  // nothing compressed
  // Shapes not known: T = 10 square matrices of M/(4T) = 2.5e7 floats
  // (5000 × 5000), each sent as 2 · 2 · 5000 floats: E_w = 2e5.
  in = Round();
  p = Predict("ring_powersgd", in);
  EXPECT_NEAR(p.bandwidth_s, 1.5 * 4 * 2e5 / 1e9, kEps);
}

// A measured window that holds plain first steps: PowerSGD at
// --powersgd_start_step=8 measured from step 5 over 75 steps holds steps
// 5, 6 and 7 plain, each ring's step (2.56 s on Round(), RingPerTensor's
// case with DDP's buckets off), the other 72 its own; the window's mean
// weighs them 3 : 72. A window from step 8 on, or an option of 0, holds
// none; one inside the plain steps is ring's step throughout.
TEST(CostModelTest, MeasuredWindowWeighsInThePlainFirstSteps) {
  CostInputs in = Round();
  in.bucket_bytes = 0;
  in.strategy_options = {{"powersgd_start_step", "8"},
                         {"ring_bucket_kb", "0"}};
  const double ring = Predict("ring", in).step_s;
  EXPECT_NEAR(ring, 2.56, kEps);
  const double own = Predict("ring_powersgd", in).step_s;
  ASSERT_LT(own, ring);
  PlainStepsInWindow plain;
  absl::StatusOr<Prediction> p =
      PredictMeasuredWindow("ring_powersgd", in, 5, 75, &plain);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NEAR(p->step_s, (3 * ring + 72 * own) / 75, kEps);
  EXPECT_NEAR(p->utilization, 1.0 / p->step_s, kEps);
  EXPECT_NEAR(p->speedup, 4.0 / p->step_s, kEps);
  EXPECT_EQ(plain.steps, 3);
  EXPECT_EQ(plain.option, "powersgd_start_step");
  EXPECT_EQ(plain.formula, "ring");
  EXPECT_NEAR(plain.plain_step_s, ring, kEps);
  EXPECT_NEAR(plain.own_step_s, own, kEps);

  p = PredictMeasuredWindow("ring_powersgd", in, 8, 72, &plain);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->step_s, own, kEps);
  EXPECT_EQ(plain.steps, 0);
  p = PredictMeasuredWindow("ring_powersgd", in, 0, 4, &plain);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->step_s, ring, kEps);
  EXPECT_EQ(plain.steps, 4);
  in.strategy_options["powersgd_start_step"] = "0";
  EXPECT_NEAR(PredictMeasuredWindow("ring_powersgd", in, 0, 75, nullptr)
                  ->step_s,
              own, kEps);

  // top-k and sign count theirs with --compression_start_step; local SGD's
  // warm-up steps are its own formula's at H = 1.
  in.strategy_options = {{"compression_start_step", "10"},
                         {"ring_bucket_kb", "0"}};
  for (const char* s : {"ring_topk", "ring_sign", "ring_onebit_adam"}) {
    p = PredictMeasuredWindow(s, in, 0, 20, &plain);
    ASSERT_TRUE(p.ok()) << s;
    EXPECT_NEAR(p->step_s, (10 * ring + 10 * Predict(s, in).step_s) / 20,
                kEps)
        << s;
  }
  in.strategy_options = {{"local_sgd_warmup_steps", "4"},
                         {"local_steps", "8"}};
  CostInputs every_step = in;
  every_step.strategy_options["local_steps"] = "1";
  p = PredictMeasuredWindow("diloco", in, 0, 20, &plain);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->step_s,
              (4 * Predict("local_sgd", every_step).step_s +
               16 * Predict("diloco", in).step_s) / 20,
              kEps);
  EXPECT_EQ(plain.formula, "local_sgd");

  // A strategy without plain first steps: PredictStep's; a bad window is
  // refused.
  EXPECT_NEAR(PredictMeasuredWindow("ring", in, 0, 3, nullptr)->step_s,
              Predict("ring", in).step_s, kEps);
  EXPECT_TRUE(absl::IsInvalidArgument(
      PredictMeasuredWindow("ring", in, 0, 0, nullptr).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      PredictMeasuredWindow("ring", in, -1, 3, nullptr).status()));
}

}  // namespace
}  // namespace ringside
