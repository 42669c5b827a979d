// The parameter servers' formulas on hand-worked cases: sps, dps, byteps
// (its server layouts and BytePS's point) and async_ps (its staleness, its CPU work on spare cores and the cores'
// bound), the push/pull pipeline and the sharded servers' calibration.
#include "experiments/cost/cost_model.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

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

// DataParallel's layout, the server beside rank 0: rank 0's bytes stay off
// the links, and rank 0's link carries the other three's: 3 s each way, a
// pipeline of 2·3·C/B = 0.006 s; one worker crosses no link at all.
TEST(CostModelTest, ServerBesideRankZeroCarriesTheOthersBytes) {
  CostInputs in = Round();
  in.servers_beside_rank0 = true;
  Prediction p = Predict("sps", in);
  EXPECT_NEAR(p.bandwidth_s, 3.0, kEps);
  EXPECT_NEAR(p.overhead_s, 0.006, kEps);
  EXPECT_NEAR(p.comm_s, 3.008, kEps);
  in.workers = 1;
  p = Predict("sps", in);
  EXPECT_NEAR(p.bandwidth_s, 0.0, kEps);
  EXPECT_NEAR(p.overhead_s, 0.0, kEps);
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

TEST(CostModelTest, DpsWithAtLeastAsManyServersAsWorkersIsWorkerLinkBound) {
  // K ≥ n: n·M/(K·B) ≤ M/B, so comm = M/B + 2α + 0.008 = 1.010 s.
  for (int64_t k : {4, 8, 1000}) {
    CostInputs in = Round();
    in.servers = k;
    EXPECT_NEAR(Predict("dps", in).bandwidth_s, 1.0, kEps) << "K=" << k;
    EXPECT_NEAR(Predict("dps", in).comm_s, 1.010, kEps) << "K=" << k;
  }
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

// A run over the bulk path (--ps_transport=tcp) pays the bulk path's
// measured w, s and ρ; without them measured, gRPC's stand in.
TEST(CostModelTest, ParameterServersPayTheirTransportsCpuTerms) {
  CostInputs in = Round();  // n = 4, M = 1e9
  in.cpu.ps_worker_byte_s = 2e-10;
  in.cpu.ps_server_byte_s = 1e-10;
  in.cpu.ps_round_s = 1e-3;
  // gRPC: M·w + n·M·s + ρ = 0.2 + 0.4 + 0.001.
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.601, 1e-9);
  in.strategy_options["ps_transport"] = "tcp";
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.601, 1e-9);  // not measured
  in.cpu.ps_tcp_worker_byte_s = 1e-10;
  in.cpu.ps_tcp_server_byte_s = 5e-11;
  in.cpu.ps_tcp_round_s = 5e-4;
  // The bulk path: 0.1 + 0.2 + 0.0005.
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.3005, 1e-9);
  in.strategy_options["ps_transport"] = "grpc";
  EXPECT_NEAR(Predict("sps", in).cpu_s, 0.601, 1e-9);
}


// byteps, 2 hosts of 2 (r = 2, h = 2), a server on each (s = 1, K = 2):
// each worker host's link carries its root's push M(1 − s/K) = 0.5 s and
// its server's share of the other host's push (h − 1)·s·M/K = 0.5 s each
// way: 1 s, ring's 2(h−1)/h among the hosts; within the host the reduce
// and the broadcast, 2M/B_i = 0.5 s at B_i = 4e9. Latency: b_r = 10
// buckets' chains of r − 1 = 1 hop, the broadcast's ⌈log2 r⌉ = 1 and the
// push and pull 2α: 13 ms; the pipeline of h = 2 roots 2·2·C/B = 4 ms.
TEST(CostModelTest, BytepsColocatedServersCostRingsBytesAmongTheHosts) {
  CostInputs in = Round();
  in.ranks_per_host = 2;
  in.intra_bandwidth_Bps = 4e9;
  in.servers_per_host = 1;
  const Prediction p = Predict("byteps", in);
  EXPECT_EQ(p.servers, 2);
  EXPECT_NEAR(p.bandwidth_s, 1.0 + 0.5, kEps);
  EXPECT_NEAR(p.latency_s, 0.013, kEps);
  EXPECT_NEAR(p.overhead_s, 0.004, kEps);
  // Push then pull (d = 2): the push phase's busiest direction twice.
  in.ps_push_pull_overlap = false;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 2 * 0.5 + 0.5, kEps);
}

// BytePS's point: at one rank a host (r = 1, h = n = 4), colocated
// servers move ring's 2(n−1)/n · M/B = 1.5 s through each host's link,
// while 4 CPU hosts of their own take each worker host down to its push
// and pull, M/B = 1 s (d = 1), their own links carrying h·M/K = 1 s.
TEST(CostModelTest, BytepsServerHostsHalveRingsBytesThroughAWorkerLink) {
  CostInputs in = Round();
  in.ranks_per_host = 1;
  in.servers_per_host = 1;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 1.5, kEps);
  EXPECT_NEAR(Predict("ring", in).bandwidth_s, 1.5, kEps);
  in.servers_per_host = 0;
  in.server_hosts = 4;
  const Prediction own = Predict("byteps", in);
  EXPECT_EQ(own.servers, 4);
  EXPECT_NEAR(own.bandwidth_s, 1.0, kEps);
  // Two such hosts for four roots: their links carry 4M/2 = 2 s.
  in.server_hosts = 2;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 2.0, kEps);
  // d = 2 with 4 of them: push then pull, 2 s.
  in.server_hosts = 4;
  in.ps_push_pull_overlap = false;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 2.0, kEps);
}

// compare's layout (both 0): the K = 2 servers each behind its own link,
// every worker on one host (r = 0: h = 1), one root: its push and pull,
// max(M, 1·M/K)/B = 1 s, and the host's reduce and broadcast over B,
// 2 s. W is 2nM whatever the layout; one worker pushes and pulls its M
// (as dps's does), and with its server on its own host crosses no link.
TEST(CostModelTest, BytepsInComparesLayoutAndItsBytesAndMemory) {
  CostInputs in = Round();
  const Prediction p = Predict("byteps", in);
  EXPECT_EQ(p.servers, 2);
  EXPECT_NEAR(p.bandwidth_s, 1.0 + 2.0, kEps);
  EXPECT_NEAR(p.worker_memory_bytes, (3 + 1) * 1e9, 1);  // s = 1 (momentum)
  EXPECT_NEAR(p.server_memory_bytes, 2 * 1e9 / 2, 1);
  in.workers = 1;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 1.0, kEps);
  in.servers_per_host = 1;
  EXPECT_NEAR(Predict("byteps", in).bandwidth_s, 0.0, kEps);
}

}  // namespace
}  // namespace ringside
