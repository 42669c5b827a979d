// The round-number inputs the cost model's tests work their cases by hand
// from, and Predict, which expects a prediction to succeed.
//
// Round numbers throughout (unless a test says otherwise):
//   M = 1e9 bytes, B = 1e9 bytes/s  =>  M/B = 1 s
//   t_c = 1 s, α = 1 ms, T = 10 tensors, τ = 10 ms, n = 4, K = 2.
#ifndef RINGSIDE_TESTS_EXPERIMENTS_COST_ROUND_INPUTS_H_
#define RINGSIDE_TESTS_EXPERIMENTS_COST_ROUND_INPUTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "experiments/cost/cost_model.h"
#include "gtest/gtest.h"

namespace ringside {

inline constexpr double kEps = 1e-9;

inline CostInputs Round() {
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

inline Prediction Predict(const std::string& strategy, const CostInputs& in) {
  absl::StatusOr<Prediction> p = PredictStep(strategy, in);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Prediction{};
}

// Calibrated CPU terms, in round numbers: each per-byte cost 1e-10 s/B
// (0.1 s per M), a ring step 1 ms, a round 2 ms.
inline CpuCosts RoundCpu() {
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

}  // namespace ringside

#endif  // RINGSIDE_TESTS_EXPERIMENTS_COST_ROUND_INPUTS_H_
