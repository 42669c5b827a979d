// The cost model's formulas on hand-worked cases, its edge cases and its
// input validation.
//
// Round numbers throughout (unless a test says otherwise):
//   M = 1e9 bytes, B = 1e9 bytes/s  =>  M/B = 1 s
//   t_c = 1 s, α = 1 ms, T = 10 tensors, τ = 10 ms, n = 4, K = 2.
#include "experiments/cost/cost_model.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

constexpr double kEps = 1e-9;

CostInputs Round() {
  CostInputs in;
  in.compute_s = 1.0;
  in.model_bytes = 1e9;
  in.bandwidth_Bps = 1e9;
  in.latency_s = 1e-3;
  in.num_tensors = 10;
  in.cycle_s = 10e-3;
  in.fusion_threshold_bytes = 3e8;
  in.workers = 4;
  in.servers = 2;
  // Parameter servers' chunk: their pipeline's fill and drain, 2·n·C/B, is
  // 2 ms per worker.
  in.ps_chunk_bytes = 1e6;
  return in;
}

Prediction Predict(const std::string& strategy, const CostInputs& in) {
  absl::StatusOr<Prediction> p = PredictStep(strategy, in);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Prediction{};
}

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

TEST(CostModelTest, SingleParameterServer) {
  // The server's link carries n·M each way: 4 · 1e9 / 1e9 = 4 s, + 2α,
  // + the chunk pipeline's fill and drain 2·4·1e6/1e9 = 0.008 s.
  // comm = 4.010 s; step = 5.010 s; speedup = 4 / 5.010.
  const Prediction p = Predict("sps", Round());
  EXPECT_EQ(p.servers, 1);
  EXPECT_NEAR(p.bandwidth_s, 4.0, kEps);
  EXPECT_NEAR(p.latency_s, 0.002, kEps);
  EXPECT_NEAR(p.overhead_s, 0.008, kEps);
  EXPECT_NEAR(p.step_s, 5.010, kEps);
  EXPECT_NEAR(p.speedup, 4 / 5.010, kEps);
  // Push and pull one after the other: twice the bytes term and no
  // pipeline, 8.002 s.
  CostInputs serial = Round();
  serial.ps_push_pull_overlap = false;
  EXPECT_NEAR(Predict("sps", serial).comm_s, 8.002, kEps);
}

// The push/pull pipeline fills and drains once a step: 2·n·C/B, with C the
// chunk (AutoChunkBytes(M, K) when 0: 1 MiB for a 1e9-byte model), at most
// a server's range; none when push and pull do not overlap (d = 2).
TEST(CostModelTest, ParameterServerPipelineFillsAndDrainsPerChunk) {
  CostInputs in = Round();  // n = 4, B = 1e9, C = 1e6
  in.ps_chunk_bytes = 0;
  EXPECT_NEAR(Predict("sps", in).overhead_s, 2.0 * 4 * (1 << 20) / 1e9, kEps);
  in.ps_chunk_bytes = 4e8;  // larger than a range of K = 2: M/K = 5e8 caps
  in.servers = 4;           // ... at 2.5e8
  EXPECT_NEAR(Predict("dps", in).overhead_s, 2.0 * 4 * 2.5e8 / 1e9, kEps);
  in.ps_push_pull_overlap = false;
  EXPECT_NEAR(Predict("dps", in).overhead_s, 0.0, kEps);
  in.ps_chunk_bytes = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(PredictStep("sps", in).status()));
}

TEST(CostModelTest, DistributedParameterServers) {
  CostInputs in = Round();
  // K = 2: max(M/B, n·M/(K·B)) = max(1, 4/2) = 2 s, + 2α, + the
  // pipeline's 0.008 s = 2.010 s.
  Prediction p = Predict("dps", in);
  EXPECT_EQ(p.servers, 2);
  EXPECT_NEAR(p.bandwidth_s, 2.0, kEps);
  EXPECT_NEAR(p.comm_s, 2.010, kEps);
  EXPECT_NEAR(p.step_s, 3.010, kEps);
  // Serial push/pull: 2 · 2 + 0.002 = 4.002 s.
  in.ps_push_pull_overlap = false;
  EXPECT_NEAR(Predict("dps", in).comm_s, 4.002, kEps);
}

// async_ps moves what dps moves, with dps's memory; τ = 0 is dps.
TEST(CostModelTest, AsyncPsIsDpsOverlappedByItsStaleness) {
  CostInputs in = Round();
  const Prediction a = Predict("async_ps", in);
  const Prediction d = Predict("dps", in);
  EXPECT_EQ(a.servers, 2);
  EXPECT_NEAR(a.comm_s, 2.010, kEps);
  EXPECT_NEAR(a.step_s, d.step_s, kEps);
  EXPECT_NEAR(a.server_memory_bytes, d.server_memory_bytes, kEps);
  EXPECT_EQ(MemoryFormula("async_ps"), MemoryFormula("dps"));
  // With a staleness bound the push+pull runs behind the compute: the
  // step is max(t_c, comm) = max(1, 2.010); dps ignores the bound.
  in.staleness = 2;
  EXPECT_NEAR(Predict("async_ps", in).step_s, 2.010, kEps);
  EXPECT_NEAR(Predict("dps", in).step_s, d.step_s, kEps);
  in.compute_s = 3;  // compute-bound: communication is hidden entirely
  EXPECT_NEAR(Predict("async_ps", in).step_s, 3, kEps);
  EXPECT_NEAR(Predict("async_ps", in).utilization, 1, kEps);
  in.staleness = -1;
  EXPECT_FALSE(PredictStep("async_ps", in).ok());
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

TEST(CostModelTest, DpsWithAtLeastAsManyServersAsWorkersIsWorkerLinkBound) {
  // K ≥ n: n·M/(K·B) ≤ M/B, so comm = M/B + 2α + 0.008 = 1.010 s.
  for (int64_t k : {4, 8, 1000}) {
    CostInputs in = Round();
    in.servers = k;
    EXPECT_NEAR(Predict("dps", in).bandwidth_s, 1.0, kEps) << "K=" << k;
    EXPECT_NEAR(Predict("dps", in).comm_s, 1.010, kEps) << "K=" << k;
  }
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

TEST(CostModelTest, ZeroLatencyLeavesTheBandwidthTerms) {
  CostInputs in = Round();
  in.latency_s = 0;
  in.cycle_s = 0;
  EXPECT_NEAR(Predict("ring", in).comm_s, 1.5, kEps);
  EXPECT_NEAR(Predict("fusion", in).comm_s, 1.5, kEps);
  EXPECT_NEAR(Predict("sps", in).comm_s, 4.008, kEps);
}

// Calibrated CPU terms, in round numbers: each per-byte cost 1e-10 s/B
// (0.1 s per M), a ring step 1 ms, a round 2 ms.
CpuCosts RoundCpu() {
  CpuCosts c;
  c.allreduce_byte_s = 1e-10;
  c.half_allreduce_byte_s = 4e-10;
  c.reduce_scatter_byte_s = 2e-10;
  c.allgather_byte_s = 3e-10;
  c.collective_step_s = 1e-3;
  c.ps_worker_byte_s = 1e-10;
  c.ps_server_byte_s = 2e-10;
  c.ps_round_s = 2e-3;
  return c;
}

// async_ps's rounds run on a thread of their own: their CPU work hides
// behind the compute in the share h = clamp((C − n)/(n + K), 0, 1) of the
// cores beyond the n training threads; every other strategy's stays
// exposed.
TEST(CostModelTest, AsyncPsHidesItsCpuWorkOnlyOnSpareCores) {
  CostInputs in = Round();  // n = 4, K = 2, t_c = 1, comm 2.010 without CPU
  in.cpu = RoundCpu();      // async_ps: 0.1 + 0.4 + 0.002 = 0.502 s of CPU
  in.cpu_streams_with_link = false;
  in.compute_s = 3;  // the round (2.512 s) within the compute
  in.staleness = 2;
  in.cpu.cores = 4;  // none beyond the 4 training threads: all exposed
  Prediction p = Predict("async_ps", in);
  EXPECT_EQ(p.hidden_cpu_s, 0);
  EXPECT_NEAR(p.step_s, 3 + 0.502, 1e-9);
  in.cpu.cores = 7;  // 3 spare cores among 4 rounds and 2 servers: h = 1/2
  p = Predict("async_ps", in);
  EXPECT_NEAR(p.hidden_cpu_s, 0.251, 1e-9);
  EXPECT_NEAR(p.step_s, 3 + 0.251, 1e-9);
  in.cpu.cores = 16;  // h = 1: max(t_c, comm)
  EXPECT_NEAR(Predict("async_ps", in).step_s, 3, 1e-9);
  in.compute_s = 1;  // the round bounds the step, CPU and all
  EXPECT_NEAR(Predict("async_ps", in).step_s, 2.010 + 0.502, 1e-9);
  in.cpu.cores = 0;  // no limit
  EXPECT_NEAR(Predict("async_ps", in).hidden_cpu_s, 0.502, 1e-9);
  // Synchronous (τ = 0) and the other strategies: nothing hidden.
  for (const std::string& s : CostModelStrategies()) {
    CostInputs at = in;
    if (s == "async_ps") at.staleness = 0;
    EXPECT_EQ(Predict(s, at).hidden_cpu_s, 0) << s;
  }
}

// Where the run measured the compute's CPU time t_c', async_ps with a
// staleness bound counts min(t_c, t_c'): its rounds' CPU work on the
// compute's cores is in the compute's wall time t_c and again in u. The
// other strategies, and τ = 0, count t_c; utilization stays t_c / step.
TEST(CostModelTest, AsyncPsCountsTheComputesCpuTimeWhereMeasured) {
  CostInputs in = Round();  // n = 4, K = 2, comm 2.010 without CPU
  in.cpu = RoundCpu();      // async_ps: 0.502 s of CPU
  in.cpu_streams_with_link = false;
  in.cpu.cores = 4;  // all exposed
  in.staleness = 2;
  in.compute_s = 3;
  in.compute_cpu_s = 2.5;
  Prediction p = Predict("async_ps", in);
  EXPECT_NEAR(p.step_compute_s, 2.5, 1e-9);
  EXPECT_NEAR(p.step_s, 2.5 + 0.502, 1e-9);
  EXPECT_NEAR(p.utilization, 3 / (2.5 + 0.502), 1e-9);
  in.compute_cpu_s = 4;  // above the wall time: t_c
  EXPECT_NEAR(Predict("async_ps", in).step_s, 3 + 0.502, 1e-9);
  in.compute_cpu_s = 2.5;
  for (const std::string& s : CostModelStrategies()) {
    CostInputs at = in;
    if (s == "async_ps") at.staleness = 0;
    EXPECT_EQ(Predict(s, at).step_compute_s, 3) << s;
  }
  in.compute_cpu_s = -1;
  EXPECT_FALSE(PredictStep("async_ps", in).ok());
  // Emulated compute sleeps through t_c whatever its CPU time.
  in.compute_cpu_s = 2.5;
  in.compute_emulated = true;
  EXPECT_NEAR(Predict("async_ps", in).step_compute_s, 3, 1e-9);
}

// No async_ps step is shorter than the CPU work of its processes over the
// cores: [n·(t_c + 2·M·x) + M·(q_1 + (n − 1)·q_w)] / C, where the rounds'
// CPU was calibrated against its K servers.
TEST(CostModelTest, AsyncPsStepIsAtLeastItsCpuWorkOverTheCores) {
  CostInputs in = Round();  // n = 4, K = 2, t_c = 1, M = 1e9
  in.cpu = RoundCpu();      // u = 0.502 s
  in.cpu_streams_with_link = false;
  in.staleness = 2;
  in.compute_s = 3;
  in.cpu.cores = 4;  // without the bound: 3 + 0.502
  EXPECT_EQ(Predict("async_ps", in).core_bound_s, 0);  // not calibrated
  EXPECT_NEAR(Predict("async_ps", in).step_s, 3.502, 1e-9);
  in.cpu.ps_round_cpu_servers = 2;
  in.cpu.ps_round_cpu_byte_s = 2e-9;         // q_1: 2 s for one worker
  in.cpu.ps_round_cpu_worker_byte_s = 3e-9;  // q_w: 3 s for each further
  in.cpu.copy_byte_s = 0.25e-9;              // x: 2·M·x = 0.5 s
  // [4·(3 + 0.5) + 2 + 3·3] / 4 = 25 / 4
  Prediction p = Predict("async_ps", in);
  EXPECT_NEAR(p.core_bound_s, 6.25, 1e-9);
  EXPECT_NEAR(p.step_s, 6.25, 1e-9);
  EXPECT_NEAR(p.exposed_comm_s, 3.25, 1e-9);
  EXPECT_NEAR(p.utilization, 3 / 6.25, 1e-9);
  in.compute_emulated = true;  // it sleeps: [4·0.5 + 11] / 4, no binding
  p = Predict("async_ps", in);
  EXPECT_NEAR(p.core_bound_s, 13.0 / 4, 1e-9);
  EXPECT_NEAR(p.step_s, 3.502, 1e-9);
  // Its synthetic gradients' CPU time counts in the bound, not in the
  // step's compute, which sleeps through t_c: [4·(1 + 0.5) + 11] / 4 = 17 / 4.
  in.compute_cpu_s = 1;
  p = Predict("async_ps", in);
  EXPECT_NEAR(p.core_bound_s, 17.0 / 4, 1e-9);
  EXPECT_NEAR(p.step_compute_s, 3, 1e-9);
  EXPECT_NEAR(p.step_s, 17.0 / 4, 1e-9);
  in.compute_cpu_s = 0;
  in.compute_emulated = false;
  // The link's CPU beyond loopback's, y per byte moved: 2·n·M·y more,
  // 2·4·1e9·0.5e-9 = 4 s: [25 + 4] / 4.
  in.link_cpu_byte_s = 0.5e-9;
  EXPECT_NEAR(Predict("async_ps", in).core_bound_s, 29.0 / 4, 1e-9);
  in.link_cpu_byte_s = -1;
  EXPECT_FALSE(PredictStep("async_ps", in).ok());
  in.link_cpu_byte_s = 0;
  in.cpu.cores = 16;  // 25 / 16 < max(t_c, comm) = 3: the formula's step
  p = Predict("async_ps", in);
  EXPECT_NEAR(p.core_bound_s, 25.0 / 16, 1e-9);
  EXPECT_NEAR(p.step_s, 3, 1e-9);
  in.cpu.cores = 4;
  in.servers = 3;  // measured against another K: no bound
  EXPECT_EQ(Predict("async_ps", in).core_bound_s, 0);
  in.servers = 2;
  // No core limit (predict, for a cluster of other machines): no bound.
  in.cpu.cores = 0;
  EXPECT_EQ(Predict("async_ps", in).core_bound_s, 0);
  in.cpu.cores = 4;
  // Synchronous (τ = 0) and the other strategies: the cores' demand over
  // the cores (CostModelTest.EveryStepIsAtLeastItsCpuDemandOverTheCores).
  for (const std::string& s : CostModelStrategies()) {
    CostInputs at = in;
    if (s == "async_ps") at.staleness = 0;
    const Prediction q = Predict(s, at);
    EXPECT_NEAR(q.core_bound_s, q.cpu_demand_s / 4, 1e-12) << s;
  }
}

TEST(CostModelTest, EveryStepIsAtLeastItsCpuDemandOverTheCores) {
  // n = 4 workers computing 0.5 s of CPU each, no CPU terms, 1 ns of CPU
  // per byte moved over the link, 2 cores. ring sends 2(n−1)M = 6e9
  // bytes: demand 4 · 0.5 + 6 = 8 s, bound 8/2 = 4 s, more than its
  // 2.56 s of terms (RingPerTensor): the step is 4 s, the cores busy
  // throughout.
  CostInputs in = Round();
  in.cpu.cores = 2;
  in.compute_cpu_s = 0.5;
  in.wire_cpu_byte_s = 1e-9;
  Prediction p = Predict("ring", in);
  EXPECT_NEAR(p.cpu_demand_s, 8, 1e-9);
  EXPECT_NEAR(p.core_bound_s, 4, 1e-9);
  EXPECT_NEAR(p.step_s, 4, 1e-9);
  EXPECT_NEAR(p.core_share, 1, 1e-9);
  // sps: n pushes and n pulls, 2nM = 8e9 bytes: (2 + 8) / 2 = 5 s.
  EXPECT_NEAR(Predict("sps", in).core_bound_s, 5, 1e-9);
  // On 8 cores the bound, 1 s, is below the terms' 2.56 s: they hold, the
  // cores 8 / (8 · 2.56) busy.
  in.cpu.cores = 8;
  p = Predict("ring", in);
  EXPECT_NEAR(p.step_s, 2.56, 1e-9);
  EXPECT_NEAR(p.core_share, 8 / (8 * 2.56), 1e-9);
  // Without a core count (predict's clusters): no demand, no bound.
  in.cpu.cores = 0;
  p = Predict("ring", in);
  EXPECT_EQ(p.cpu_demand_s, 0);
  EXPECT_EQ(p.core_bound_s, 0);
  in.wire_cpu_byte_s = -1;
  EXPECT_FALSE(PredictStep("ring", in).ok());
}

TEST(CostModelTest, UncalibratedModelHasNoCpuTerms) {
  EXPECT_FALSE(CpuCosts{}.calibrated());
  EXPECT_TRUE(RoundCpu().calibrated());
  for (const std::string& s : CostModelStrategies()) {
    EXPECT_EQ(Predict(s, Round()).cpu_s, 0) << s;
  }
}

TEST(CostModelTest, CalibratedCpuTermsAddToCommunication) {
  CostInputs in = Round();  // n = 4, K = 2, T = 10, M = 1e9
  in.cpu = RoundCpu();
  in.cpu_streams_with_link = false;  // loopback: the cores move the bytes
  in.bucket_bytes = 0;  // ring: one all-reduce per tensor
  struct Case {
    const char* strategy;
    double cpu_s;
  };
  for (const Case& c :
       {// 2·3/4 · 0.1 + 10 calls · 2·3 ring steps · 1 ms
        Case{"ring", 0.15 + 0.060},
        // the same bytes; b = ⌈1e9/3e8⌉ = 4 fused + 1 control call
        Case{"fusion", 0.15 + 0.030},
        // 0.1 (worker) + 4 · 0.2 (server) + 2 ms
        Case{"sps", 0.1 + 0.8 + 0.002},
        // the server part over K = 2 servers
        Case{"dps", 0.1 + 0.4 + 0.002}, Case{"async_ps", 0.1 + 0.4 + 0.002},
        // 1.5 · 0.1 + 3/4 · 0.3 + an all-reduce's 6 steps and an
        // all-gather's 3
        Case{"zero1", 0.15 + 0.225 + 0.009},
        // 3/4 · (0.2 + 0.3) + (T + 1) reduce-scatters and all-gathers of
        // 3 steps (bucket_bytes 0: per tensor)
        Case{"zero2", 0.375 + 0.033},
        // 3/4 · (2 · 0.3 + 0.2) + 3T calls of 3 steps
        Case{"zero3", 0.6 + 0.090},
        // 2·3/4 · (M/2) · 4e-10 (fp16, per wire byte) + b_r = T calls
        // of 6 (bucket_bytes 0: per tensor)
        Case{"ring_fp16", 0.3 + 0.060},
        // one host of 4: a reduce-scatter and an all-gather, 3/4 ·
        // (0.2 + 0.3), + b_r = T calls of 2·3 steps
        Case{"hierarchical", 0.375 + 0.060}}) {
    const Prediction p = Predict(c.strategy, in);
    EXPECT_NEAR(p.cpu_s, c.cpu_s, 1e-9) << c.strategy;
    EXPECT_NEAR(p.comm_s, p.bandwidth_s + p.latency_s + p.overhead_s + c.cpu_s,
                1e-9)
        << c.strategy;
    EXPECT_EQ(p.wire_s, p.bandwidth_s) << c.strategy;
  }
  // The servers' CPU runs on at most C cores at once.
  in.servers = 4;
  in.cpu.cores = 2;
  EXPECT_NEAR(Predict("dps", in).cpu_s, 0.1 + 0.4 + 0.002, 1e-9);
  in.cpu.cores = 0;
  EXPECT_NEAR(Predict("dps", in).cpu_s, 0.1 + 0.2 + 0.002, 1e-9);
  // One worker: no collective, so no collective CPU.
  in.workers = 1;
  EXPECT_EQ(Predict("ring", in).cpu_s, 0);
  EXPECT_EQ(Predict("zero3", in).cpu_s, 0);
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.1 + 0.2 + 0.002, 1e-9);
}

// On a wire of its own the per-byte CPU work runs while the bytes are in
// flight, and a collective's ring steps while earlier bytes drain: the link
// adds only its seconds beyond them, and where the CPU is the slower the
// link adds nothing; the wake-up and a round's fixed cost ρ always add.
TEST(CostModelTest, StreamingCpuRunsAlongsideAWireOfItsOwn) {
  CostInputs in = Round();  // n = 4, K = 2, T = 10, M = 1e9, B = 1e9 B/s
  in.cpu = RoundCpu();
  in.bucket_bytes = 0;
  ASSERT_TRUE(in.cpu_streams_with_link);  // the default
  // ring: 1.5 s on the link, 0.15 s of summing and 60 ms of ring steps in
  // it.
  Prediction p = Predict("ring", in);
  EXPECT_NEAR(p.streamed_cpu_s, 0.15 + 0.060, 1e-9);
  EXPECT_NEAR(p.cpu_s, 0.15 + 0.060, 1e-9);
  EXPECT_NEAR(p.wire_s, 1.5 - 0.21, 1e-9);
  EXPECT_NEAR(p.comm_s, 1.5 + p.latency_s, 1e-9);
  // The wake-up adds on top.
  in.cpu.collective_wake_s = 5e-3;
  p = Predict("ring", in);
  EXPECT_NEAR(p.comm_s, 1.5 + p.latency_s + 5e-3, 1e-9);
  in.cpu.collective_wake_s = 0;
  // sps: the server's link 4 s, its CPU 0.1 + 0.8 s of it, ρ 2 ms.
  p = Predict("sps", in);
  EXPECT_NEAR(p.streamed_cpu_s, 0.9, 1e-9);
  EXPECT_NEAR(p.comm_s, 4 + p.latency_s + p.overhead_s + 0.002, 1e-9);
  // A fast wire: the CPU is the slower; the link adds nothing.
  in.bandwidth_Bps = 1e11;
  p = Predict("ring", in);
  EXPECT_EQ(p.wire_s, 0);
  EXPECT_NEAR(p.comm_s, p.latency_s + 0.15 + 0.060, 1e-9);
  // The streaming parts of the other formulas (CalibratedCpuTerms...'s
  // cases; the parameter servers' less ρ).
  in.bandwidth_Bps = 1e9;
  for (const auto& [strategy, streamed] :
       std::vector<std::pair<std::string, double>>{
           {"fusion", 0.15 + 0.030},
           {"dps", 0.1 + 0.4},
           {"async_ps", 0.1 + 0.4},
           {"zero1", 0.15 + 0.225 + 0.009},
           {"zero2", 0.375 + 0.033},
           {"zero3", 0.6 + 0.090},
           {"ring_fp16", 0.3 + 0.060},
           {"hierarchical", 0.375 + 0.060}}) {
    p = Predict(strategy, in);
    EXPECT_NEAR(p.streamed_cpu_s, streamed, 1e-9) << strategy;
    EXPECT_NEAR(p.wire_s, std::max(0.0, p.bandwidth_s - streamed), 1e-9)
        << strategy;
  }
}

// The step's collectives start behind its compute: one wake-up per step
// for every collective strategy, however many buckets or tensors it calls.
TEST(CostModelTest, WakeCostIsOncePerStepOfEveryCollectiveStrategy) {
  CostInputs in = Round();  // n = 4, T = 10
  in.cpu.collective_wake_s = 5e-3;
  in.model_bytes = 30.0 * 1024 * 1024;  // 1 MiB, then 25 MiB buckets: b_r = 3
  const std::set<std::string> collective = {
      "ring", "ring_fp16", "hierarchical", "fusion", "zero1", "zero2", "zero3"};
  for (const std::string& s : CostModelStrategies()) {
    EXPECT_NEAR(Predict(s, in).cpu_s, collective.count(s) ? 5e-3 : 0, 1e-12)
        << s;
  }
  // ring_fp16 pays its own fp16 all-reduce's wake-up, when measured.
  in.cpu.half_collective_wake_s = 2e-3;
  EXPECT_NEAR(Predict("ring_fp16", in).cpu_s, 2e-3, 1e-12);
  EXPECT_NEAR(Predict("ring", in).cpu_s, 5e-3, 1e-12);
  in.bucket_bytes = 0;  // one bucket per tensor: still one wake-up
  EXPECT_NEAR(Predict("ring", in).cpu_s, 5e-3, 1e-12);
  EXPECT_NEAR(Predict("zero3", in).cpu_s, 5e-3, 1e-12);
  in.workers = 1;  // nothing to wake
  EXPECT_EQ(Predict("ring", in).cpu_s, 0);
  EXPECT_EQ(Predict("zero3", in).cpu_s, 0);
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

TEST(CostModelTest, ShardedServersUseTheirOwnCalibrationWhenKMatches) {
  CostInputs in = Round();  // n = 4, K = 2, M = 1e9
  in.cpu = RoundCpu();
  in.cpu.ps_sharded_servers = 2;
  in.cpu.ps_sharded_worker_byte_s = 3e-10;
  in.cpu.ps_sharded_server_byte_s = 1e-10;
  in.cpu.ps_sharded_round_s = 4e-3;
  // Measured against these K = 2 servers: M·w_K + n·M·s_K + ρ_K, their
  // parallelism already in s_K.
  EXPECT_NEAR(Predict("dps", in).cpu_s, 0.3 + 0.4 + 0.004, 1e-9);
  EXPECT_NEAR(Predict("async_ps", in).cpu_s, 0.3 + 0.4 + 0.004, 1e-9);
  // sps has one server: its own costs.
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.1 + 0.8 + 0.002, 1e-9);
  // Another K: one server's costs, the servers' part over min(K, C).
  in.servers = 4;
  in.cpu.cores = 2;
  EXPECT_NEAR(Predict("dps", in).cpu_s, 0.1 + 0.4 + 0.002, 1e-9);
}

TEST(CostModelTest, CpuCostsRoundTripThroughJson) {
  CpuCosts c = RoundCpu();
  c.cores = 3;
  c.ps_sharded_servers = 4;
  c.ps_sharded_round_s = 5e-3;
  c.half_collective_wake_s = 7e-4;
  c.refault_byte_s = 3e-10;
  c.half_convert_byte_s = 6e-10;
  c.ps_round_cpu_servers = 4;
  c.ps_round_cpu_byte_s = 5e-9;
  c.ps_round_cpu_worker_byte_s = 4e-9;
  c.copy_byte_s = 1e-10;
  const nlohmann::json j = CpuCostsJson(c);
  absl::StatusOr<CpuCosts> back = CpuCostsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CpuCostsJson(*back), j);
  EXPECT_EQ(back->cores, 3);
  EXPECT_EQ(back->ps_sharded_servers, 4);
  EXPECT_EQ(back->ps_round_cpu_servers, 4);
  EXPECT_EQ(back->ps_round_cpu_worker_byte_s, 4e-9);
  nlohmann::json missing = j;
  missing.erase("ps_round_s");
  EXPECT_THAT(std::string(CpuCostsFromJson(missing).status().message()),
              HasSubstr("'ps_round_s' must be a number >= 0"));
  // A run from before the wake-up was measured reads as 0; a bad one is
  // refused like the others.
  nlohmann::json older = j;
  older.erase("collective_wake_s");
  older.erase("half_collective_wake_s");
  older.erase("refault_byte_s");
  older.erase("half_convert_byte_s");
  older.erase("ps_sharded_servers");
  older.erase("ps_sharded_round_s");
  for (const char* key : {"ps_round_cpu_servers", "ps_round_cpu_byte_s",
                          "ps_round_cpu_worker_byte_s", "copy_byte_s"}) {
    older.erase(key);
  }
  absl::StatusOr<CpuCosts> old_costs = CpuCostsFromJson(older);
  ASSERT_TRUE(old_costs.ok()) << old_costs.status();
  EXPECT_EQ(old_costs->collective_wake_s, 0);
  EXPECT_EQ(old_costs->half_collective_wake_s, 0);
  EXPECT_EQ(old_costs->refault_byte_s, 0);
  EXPECT_EQ(old_costs->half_convert_byte_s, 0);
  EXPECT_EQ(old_costs->ps_sharded_servers, 0);
  EXPECT_EQ(old_costs->ps_sharded_round_s, 0);
  EXPECT_EQ(old_costs->ps_round_cpu_servers, 0);
  EXPECT_EQ(old_costs->copy_byte_s, 0);
  nlohmann::json bad_servers = j;
  bad_servers["ps_round_cpu_servers"] = -1;
  EXPECT_THAT(std::string(CpuCostsFromJson(bad_servers).status().message()),
              HasSubstr("'ps_round_cpu_servers' must be an integer >= 0"));
  older["collective_wake_s"] = "fast";
  EXPECT_THAT(std::string(CpuCostsFromJson(older).status().message()),
              HasSubstr("'collective_wake_s' must be a number >= 0"));
  nlohmann::json negative = j;
  negative["allgather_byte_s"] = -1;
  EXPECT_FALSE(CpuCostsFromJson(negative).ok());
  EXPECT_FALSE(CpuCostsFromJson(nlohmann::json::array()).ok());
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

TEST(CostModelTest, ZeroStagesTakeTheRingsCriticalBytesWhenReported) {
  // n = 4, B = 1e9 B/s: a run that reports 2.5e9 critical bytes a step
  // spends 2.5 s on the link, whatever the balanced formula says.
  CostInputs in = Round();
  in.ring_critical_bytes = 2.5e9;
  for (const char* s : {"zero1", "zero2", "zero3"}) {
    EXPECT_NEAR(Predict(s, in).bandwidth_s, 2.5, kEps) << s;
  }
  EXPECT_NEAR(Predict("ring", in).bandwidth_s, 1.5, kEps);  // not ring's
  in.ring_critical_bytes = -1;
  EXPECT_FALSE(PredictStep("zero2", in).ok());
}

TEST(CostModelTest, RejectsNegativeOrInfiniteCpuCosts) {
  CostInputs in = Round();
  in.cpu.ps_server_byte_s = -1e-9;
  absl::StatusOr<Prediction> p = PredictStep("sps", in);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("cpu.ps_server_byte_s must be >= 0"));
  in = Round();
  in.cpu.allreduce_byte_s = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(PredictStep("ring", in).ok());
  in = Round();
  in.cpu.cores = -1;
  EXPECT_FALSE(PredictStep("dps", in).ok());
}

TEST(CostModelTest, RejectsBadInputWithInvalidArgument) {
  struct Case {
    const char* what;
    void (*breaks)(CostInputs&);
  };
  const Case cases[] = {
      {"workers", [](CostInputs& in) { in.workers = 0; }},
      {"workers", [](CostInputs& in) { in.workers = -3; }},
      {"servers", [](CostInputs& in) { in.servers = 0; }},
      {"bandwidth", [](CostInputs& in) { in.bandwidth_Bps = 0; }},
      {"bandwidth", [](CostInputs& in) { in.bandwidth_Bps = -1e9; }},
      {"bandwidth",
       [](CostInputs& in) {
         in.bandwidth_Bps = std::numeric_limits<double>::quiet_NaN();
       }},
      {"compute_s", [](CostInputs& in) { in.compute_s = 0; }},
      {"compute_s",
       [](CostInputs& in) {
         in.compute_s = std::numeric_limits<double>::infinity();
       }},
      {"model_bytes", [](CostInputs& in) { in.model_bytes = 0; }},
      {"num_tensors", [](CostInputs& in) { in.num_tensors = 0; }},
      {"latency", [](CostInputs& in) { in.latency_s = -1e-6; }},
      {"fusion_threshold_bytes",
       [](CostInputs& in) { in.fusion_threshold_bytes = -1; }},
      {"cycle_s", [](CostInputs& in) { in.cycle_s = -1; }},
      {"overlap", [](CostInputs& in) { in.overlap = 1.5; }},
      {"overlap", [](CostInputs& in) { in.overlap = -0.1; }},
      {"ranks_per_host", [](CostInputs& in) { in.ranks_per_host = -1; }},
      {"intra_bandwidth", [](CostInputs& in) { in.intra_bandwidth_Bps = -1; }},
      {"intra_latency",
       [](CostInputs& in) {
         in.intra_latency_s = std::numeric_limits<double>::quiet_NaN();
       }},
  };
  for (const Case& c : cases) {
    CostInputs in = Round();
    c.breaks(in);
    const absl::Status v = ValidateCostInputs(in);
    EXPECT_TRUE(absl::IsInvalidArgument(v)) << c.what << ": " << v;
    EXPECT_THAT(std::string(v.message()), HasSubstr(c.what));
    for (const std::string& s : CostModelStrategies()) {
      EXPECT_TRUE(absl::IsInvalidArgument(PredictStep(s, in).status()))
          << c.what << " " << s;
    }
  }
}

TEST(CostModelTest, RejectsUnknownStrategyListingTheKnownOnes) {
  const absl::Status s = PredictStep("allgather", Round()).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("allgather"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("baseline, sps, dps, ring, fusion"));
}

TEST(CostModelTest, SweepDoublesWorkersUpToTheMaximum) {
  absl::StatusOr<std::vector<Prediction>> all =
      PredictSweep(CostModelStrategies(), Round(), 1024);
  ASSERT_TRUE(all.ok()) << all.status();
  // baseline once + 10 strategies × n ∈ {1, 2, 4, ..., 1024} (11 values).
  ASSERT_EQ(all->size(), 1u + 10 * 11);
  EXPECT_EQ((*all)[0].strategy, "baseline");
  EXPECT_EQ((*all)[1].strategy, "sps");
  EXPECT_EQ((*all)[1].workers, 1);
  EXPECT_EQ((*all)[11].workers, 1024);
  EXPECT_EQ(all->back().strategy, "zero3");
  EXPECT_EQ(all->back().workers, 1024);
  // The sweep's K stays the inputs' K.
  EXPECT_EQ((*all)[12].strategy, "dps");
  EXPECT_EQ((*all)[12].servers, 2);

  // A maximum that is not a power of two ends the sweep: 1, 2, 4, 6.
  absl::StatusOr<std::vector<Prediction>> six =
      PredictSweep({"ring"}, Round(), 6);
  ASSERT_TRUE(six.ok()) << six.status();
  std::vector<int64_t> ns;
  for (const Prediction& p : *six) ns.push_back(p.workers);
  EXPECT_EQ(ns, (std::vector<int64_t>{1, 2, 4, 6}));

  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictSweep({"ring"}, Round(), 0).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictSweep({"nope"}, Round(), 4).status()));
}

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
  CostInputs one = Round();
  one.workers = 1;
  EXPECT_NEAR(Predict("zero1", one).comm_s, 0, kEps);
  EXPECT_NEAR(Predict("zero2", one).comm_s, 0, kEps);
  EXPECT_NEAR(Predict("zero3", one).comm_s, 0, kEps);
}

TEST(CostModelTest, MemoryPerRankFollowsZeroAccounting) {
  // P = 1e9, n = 4, K = 2; Adam (s = 2): plain data parallel 4P, stage 1
  // 2P + 2P/n, stage 2 P + 3P/n (Rajbhandari et al.'s figures), servers
  // (2 + s)P/K, workers of the parameter servers 2P.
  CostInputs in = Round();
  in.optimizer_state_per_param = 2;
  EXPECT_NEAR(Predict("ring", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("fusion", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("baseline", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("zero1", in).worker_memory_bytes, 2.5e9, 1);
  EXPECT_NEAR(Predict("zero2", in).worker_memory_bytes, 1.75e9, 1);
  EXPECT_NEAR(Predict("zero3", in).worker_memory_bytes, 1e9, 1);  // 4P/n
  EXPECT_NEAR(Predict("ring", in).server_memory_bytes, 0, 1);
  EXPECT_NEAR(Predict("sps", in).worker_memory_bytes, 2e9, 1);
  EXPECT_NEAR(Predict("sps", in).server_memory_bytes, 4e9, 1);  // K = 1
  EXPECT_NEAR(Predict("dps", in).server_memory_bytes, 2e9, 1);  // 4P / 2
  // SGD with momentum (s = 1): ring 3P, zero1 2P + P/4.
  in.optimizer_state_per_param = 1;
  EXPECT_NEAR(Predict("ring", in).worker_memory_bytes, 3e9, 1);
  EXPECT_NEAR(Predict("zero1", in).worker_memory_bytes, 2.25e9, 1);

  EXPECT_EQ(MemoryFormula("zero2"), "P + (1 + s)·P/n");
  EXPECT_EQ(MemoryFormula("nope"), "");
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("nope", 1e9, 1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("ring", 0, 1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("ring", 1e9, -1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("dps", 1e9, 1, 0, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("dps", 1e9, 1, 4, 0).status()));
  in.optimizer_state_per_param = std::nan("");
  EXPECT_THAT(std::string(ValidateCostInputs(in).message()),
              HasSubstr("optimizer_state_per_param"));
}

TEST(CostModelTest, PredictionErrorIsRelativeToTheMeasurement) {
  // (1.1 − 1.0) / 1.0 = +0.1 (over-predicts); (0.9 − 1.2) / 1.2 = −0.25.
  EXPECT_NEAR(*PredictionError(1.1, 1.0), 0.1, kEps);
  EXPECT_NEAR(*PredictionError(0.9, 1.2), -0.25, kEps);
  EXPECT_NEAR(*PredictionError(2.0, 2.0), 0.0, kEps);
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(1.0, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(1.0, -1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(-1.0, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictionError(std::nan(""), 1.0).status()));
}

TEST(CostModelTest, MarkdownAndJsonCarryEveryPrediction) {
  absl::StatusOr<std::vector<Prediction>> all =
      PredictSweep({"baseline", "ring"}, Round(), 4);
  ASSERT_TRUE(all.ok()) << all.status();
  const std::string md = PredictionsMarkdown(*all);
  // Ring at n = 4: speedup 1.5625 → "1.56", efficiency 0.390625 → "0.39";
  // step 2560 ms, utilization 39.1%.
  EXPECT_THAT(md, HasSubstr("1.56 (0.39)"));
  EXPECT_THAT(md, HasSubstr("| ring     |     4 |  2560.000 |"));
  EXPECT_THAT(md, HasSubstr("39.1%"));
  EXPECT_THAT(md, HasSubstr("| baseline |     1 |  1000.000 |"));

  const nlohmann::json j = PredictionsJson(Round(), *all);
  ASSERT_EQ(j["predictions"].size(), all->size());  // 1 + 3
  EXPECT_EQ(j["predictions"][3]["strategy"], "ring");
  EXPECT_EQ(j["predictions"][3]["workers"], 4);
  EXPECT_NEAR(j["predictions"][3]["step_s"].get<double>(), 2.56, kEps);
  // s = 1 by default: ring holds (2 + 1)·P = 3e9 bytes per worker.
  EXPECT_NEAR(j["predictions"][3]["worker_memory_bytes"].get<double>(), 3e9, 1);
  EXPECT_THAT(md, HasSubstr("|          3000.0 |               - |"));
  EXPECT_THAT(md, HasSubstr("ring (2 + s)·P"));
  EXPECT_EQ(j["inputs"]["optimizer_state_per_param"], 1.0);
  EXPECT_EQ(j["inputs"]["servers"], 2);
  EXPECT_EQ(j["inputs"]["bandwidth_Bps"], 1e9);
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

}  // namespace
}  // namespace ringside
