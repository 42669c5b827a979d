// The calibrated CPU terms in the formulas: per byte, per ring step and
// per round, streaming alongside a wire of its own, the wake-up once per
// step, the cores' bound, and CpuCosts' JSON.
#include "experiments/cost/cost_model.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

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
      "ring",         "ring_fp16", "ring_topk", "ring_sign",
      "ring_onebit_adam", "ring_powersgd", "hierarchical", "fusion",
      "zero1",        "zero2",     "zero3"};
  // The periodic-averaging ones wake once per average: every H = 8 steps
  // (their default --local_steps).
  const std::set<std::string> periodic = {"local_sgd", "diloco"};
  for (const std::string& s : CostModelStrategies()) {
    const double want =
        collective.count(s) ? 5e-3 : periodic.count(s) ? 5e-3 / 8 : 0;
    EXPECT_NEAR(Predict(s, in).cpu_s, want, 1e-12) << s;
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

}  // namespace
}  // namespace ringside
