// The calibration's benchmarks run the real collective and parameter-server
// paths (threads over loopback); every cost is its documented derivation
// from the timings the calibration keeps; bad options are refused.
#include "experiments/calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(CalibrationTest, MeasuresEveryPathOnLoopback) {
  CalibrationOptions options;
  options.model_bytes = 1 << 20;
  options.num_tensors = 4;
  options.cores = 2;
  options.servers = 2;
  options.busy_before_call_s = 1.5e-3;
  options.timeout = absl::Seconds(60);
  // The model's matrices (a bias is not one): 128 × 1024 and 64 × 2048.
  options.tensor_shapes = {{128, 1024}, {1024}, {64, 2048}};
  absl::StatusOr<Calibration> c = Calibrate(options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->busy_before_call_s, 1.5e-3);
  // Every benchmark ran: its timing is positive and finite.
  for (double s : {c->allreduce_s, c->allreduce_small_s,
                   c->allreduce_small_busy_s, c->reduce_scatter_s,
                   c->half_allreduce_s, c->half_allreduce_small_s,
                   c->half_allreduce_small_busy_s,
                   c->allgather_s, c->ps.round_1_s, c->ps.round_2_s,
                   c->ps.round_small_s, c->ps_sharded.round_1_s,
                   c->ps_sharded.round_2_s, c->ps_sharded.round_small_s,
                   c->ps_round_cpu.round_1_cpu_s,
                   c->ps_round_cpu.round_2_cpu_s, c->cpu.copy_byte_s,
                   c->loopback_bandwidth_Bps}) {
    EXPECT_GT(s, 0);
    EXPECT_TRUE(std::isfinite(s));
  }
  EXPECT_EQ(c->benchmark_bytes, 1 << 20);
  EXPECT_EQ(c->cpu.cores, 2);
  // Every per-byte cost is its derivation from the timings above (each
  // clipped at 0, so "at least 0" would say nothing): the slope between
  // the big and the small call, less the loopback link's 1/B.
  const double B = c->loopback_bandwidth_Bps;
  const double m = static_cast<double>(c->benchmark_bytes);
  const double s = static_cast<double>(c->small_bytes);
  EXPECT_EQ(c->small_bytes, 64 << 10);
  EXPECT_GT(c->reduce_scatter_small_s, 0);
  EXPECT_GT(c->allgather_small_s, 0);
  EXPECT_DOUBLE_EQ(c->cpu.allreduce_byte_s,
                   CpuPerByte(c->allreduce_s, c->allreduce_small_s, m, s, B));
  EXPECT_DOUBLE_EQ(c->cpu.reduce_scatter_byte_s,
                   CpuPerByte(c->reduce_scatter_s, c->reduce_scatter_small_s,
                              m / 2, s / 2, B));
  EXPECT_DOUBLE_EQ(c->cpu.allgather_byte_s,
                   CpuPerByte(c->allgather_s, c->allgather_small_s, m / 2,
                              s / 2, B));
  EXPECT_DOUBLE_EQ(c->cpu.half_allreduce_byte_s,
                   CpuPerByte(c->half_allreduce_s, c->half_allreduce_small_s,
                              m / 2, s / 2, B));
  for (PsCalibration p : {c->ps, c->ps_sharded}) {
    const PsCalibration measured = p;
    SplitPsCpu(m, B, &p);
    EXPECT_DOUBLE_EQ(measured.worker_byte_s, p.worker_byte_s);
    EXPECT_DOUBLE_EQ(measured.server_byte_s, p.server_byte_s);
  }
  EXPECT_EQ(c->cpu.ps_worker_byte_s, c->ps.worker_byte_s);
  EXPECT_EQ(c->cpu.ps_server_byte_s, c->ps.server_byte_s);
  EXPECT_EQ(c->cpu.ps_sharded_worker_byte_s, c->ps_sharded.worker_byte_s);
  EXPECT_EQ(c->cpu.ps_sharded_server_byte_s, c->ps_sharded.server_byte_s);
  // A ring step's fixed cost: the quiet small all-reduce less its bytes
  // and its two messages' α, over its 2 ring steps (2 ranks).
  EXPECT_NEAR(c->cpu.collective_step_s,
              std::max(0.0, c->allreduce_small_s -
                                s * (c->cpu.allreduce_byte_s + 1.0 / B) -
                                2 * c->loopback_latency_s) /
                  2,
              1e-12);
  // The per-round cost is the small model's round itself; against one
  // server for sps, against K = 2 for dps and async_ps.
  EXPECT_EQ(c->cpu.ps_round_s, c->ps.round_small_s);
  EXPECT_EQ(c->ps.servers, 1);
  EXPECT_EQ(c->cpu.ps_sharded_servers, 2);
  EXPECT_EQ(c->cpu.ps_sharded_round_s, c->ps_sharded.round_small_s);
  // async_ps's rounds' CPU: against its K = 2; per model byte.
  EXPECT_EQ(c->cpu.ps_round_cpu_servers, 2);
  EXPECT_NEAR(c->cpu.ps_round_cpu_byte_s,
              c->ps_round_cpu.round_1_cpu_s / (1 << 20), 1e-15);
  EXPECT_NEAR(c->cpu.ps_round_cpu_worker_byte_s,
              std::max(0.0, c->ps_round_cpu.round_2_cpu_s -
                                c->ps_round_cpu.round_1_cpu_s) /
                  (1 << 20),
              1e-15);
  EXPECT_THAT(CalibrationLine(*c),
              HasSubstr("async_ps's rounds beside compute stand-ins "
                        "against 2 servers: "));
  EXPECT_GT(c->wall_s, 0);
  const std::string line = CalibrationLine(*c);
  EXPECT_THAT(line, HasSubstr("Calibration (measured on this machine"));
  EXPECT_THAT(line, HasSubstr("M = 1.0 MB"));
  EXPECT_THAT(line, HasSubstr("shared by 2 cores"));
  EXPECT_THAT(line, HasSubstr("to wake a step's collectives from cores busy "
                              "for 1.50 ms before them (the baseline's "
                              "compute per step; "));
  EXPECT_THAT(line, HasSubstr("against 1 server (sps) worker"));
  EXPECT_THAT(line, HasSubstr("against 2 servers (dps, async_ps) worker"));
  const nlohmann::json j = CalibrationJson(*c);
  EXPECT_EQ(j["ps_round_s"].get<double>(), c->cpu.ps_round_s);
  EXPECT_EQ(j["collective_wake_s"].get<double>(), c->cpu.collective_wake_s);
  // The wake-up is the busy start's extra over the quiet one.
  EXPECT_NEAR(c->cpu.collective_wake_s,
              std::max(0.0, c->allreduce_small_busy_s - c->allreduce_small_s),
              1e-12);
  EXPECT_NEAR(
      c->cpu.half_collective_wake_s,
      std::max(0.0, c->half_allreduce_small_busy_s - c->half_allreduce_small_s),
      1e-12);
  EXPECT_THAT(line, HasSubstr("for the fp16 all-reduce"));
  // ring_fp16's conversions, timed on the benchmark's floats.
  EXPECT_GT(c->half_convert_s, 0);
  EXPECT_NEAR(c->cpu.half_convert_byte_s,
              c->half_convert_s / static_cast<double>(c->benchmark_bytes),
              1e-18);
  EXPECT_THAT(line, HasSubstr("its conversions "));
  EXPECT_EQ(j["half_convert_byte_s"].get<double>(),
            c->cpu.half_convert_byte_s);
  EXPECT_EQ(j["half_collective_wake_s"].get<double>(),
            c->cpu.half_collective_wake_s);
  EXPECT_EQ(j["benchmark_bytes"].get<int64_t>(), 1 << 20);
  EXPECT_EQ(j["small_bytes"].get<int64_t>(), 64 << 10);
  EXPECT_EQ(j["reduce_scatter_small_s"].get<double>(),
            c->reduce_scatter_small_s);
  EXPECT_EQ(j["allgather_small_s"].get<double>(), c->allgather_small_s);
  EXPECT_EQ(j["busy_before_call_s"].get<double>(), 1.5e-3);
  // Writing into pages just given back faults them in and zeroes them: it
  // costs more than writing into resident pages.
  EXPECT_EQ(c->refault_bytes, 1 << 20);
  EXPECT_GT(c->resident_write_s, 0);
  EXPECT_GT(c->refault_write_s, c->resident_write_s);
  EXPECT_NEAR(c->cpu.refault_byte_s,
              (c->refault_write_s - c->resident_write_s) / (1 << 20), 1e-18);
  EXPECT_THAT(line, HasSubstr("writing into pages given back "));
  EXPECT_EQ(j["refault_byte_s"].get<double>(), c->cpu.refault_byte_s);
  // PowerSGD's kernels on the model's two matrices at rank 2: 3·E·2
  // multiply-adds over E = 2 · 131072 elements, and the rates per unit.
  EXPECT_EQ(c->lowrank_matrices, 2);
  EXPECT_EQ(c->lowrank_rank, 2);
  EXPECT_EQ(c->lowrank_elements, 2.0 * 131072);
  EXPECT_EQ(c->lowrank_multiply_adds, 3.0 * 2 * 2 * 131072);
  EXPECT_GT(c->lowrank_products_s, 0);
  EXPECT_GT(c->lowrank_feedback_s, 0);
  EXPECT_DOUBLE_EQ(c->cpu.lowrank_multiply_add_s,
                   c->lowrank_products_s / c->lowrank_multiply_adds);
  EXPECT_DOUBLE_EQ(c->cpu.error_feedback_element_s,
                   c->lowrank_feedback_s / c->lowrank_elements);
  EXPECT_THAT(line, HasSubstr("PowerSGD (rank 2, 2 matrices) "));
  EXPECT_EQ(j["lowrank_multiply_add_s"].get<double>(),
            c->cpu.lowrank_multiply_add_s);
  EXPECT_EQ(CpuCostsFromJson(j)->error_feedback_element_s,
            c->cpu.error_feedback_element_s);
  // The all-gather hooks' compression on the model's tensors that fit in
  // the benchmark's 262144 floats: the first two (the third would pass it).
  EXPECT_EQ(c->gather_elements, 131072.0 + 1024);
  EXPECT_GT(c->topk_s, 0);
  EXPECT_GT(c->sign_pack_s, 0);
  EXPECT_GT(c->sign_add_s, 0);
  EXPECT_DOUBLE_EQ(c->cpu.topk_element_s, c->topk_s / c->gather_elements);
  EXPECT_DOUBLE_EQ(c->cpu.sign_pack_element_s,
                   c->sign_pack_s / c->gather_elements);
  EXPECT_DOUBLE_EQ(c->cpu.sign_add_element_s,
                   c->sign_add_s / c->gather_elements);
  EXPECT_THAT(line, HasSubstr("; top-k "));
  EXPECT_EQ(j["sign_add_element_s"].get<double>(), c->cpu.sign_add_element_s);
}

// The derivations on made-up timings, where the clipping shows.
TEST(CalibrationTest, CpuPerByteIsTheSlopeLessTheLink) {
  // 10 ms for 1 MB, 1 ms for 0.1 MB: 10 ns/B, of which the 1 GB/s link
  // takes 1 ns/B.
  EXPECT_NEAR(CpuPerByte(10e-3, 1e-3, 1e6, 1e5, 1e9), 9e-9, 1e-15);
  // A slope faster than the link: clipped at 0.
  EXPECT_EQ(CpuPerByte(1e-3, 0.9e-3, 1e6, 1e5, 1e9), 0);
  // No slope between equal sizes.
  EXPECT_EQ(CpuPerByte(10e-3, 1e-3, 1e5, 1e5, 1e9), 0);
}

TEST(CalibrationTest, SplitPsCpuSeparatesWorkerAndServer) {
  // M = 1 MB on a 1 GB/s link (1 ms a pass), ρ = 0.1 ms, w = 2 ns/B,
  // s = 3 ns/B: one worker 1 + 0.1 + 2 + 3 ms, two workers 2 + 0.1 + 2 + 6.
  PsCalibration p;
  p.round_1_s = 6.1e-3;
  p.round_2_s = 10.1e-3;
  p.round_small_s = 0.1e-3;
  SplitPsCpu(1e6, 1e9, &p);
  EXPECT_NEAR(p.server_byte_s, 3e-9, 1e-15);
  EXPECT_NEAR(p.worker_byte_s, 2e-9, 1e-15);
  // Rounds no slower than their link time: no CPU to split.
  p.round_1_s = 0.5e-3;
  p.round_2_s = 1e-3;
  SplitPsCpu(1e6, 1e9, &p);
  EXPECT_EQ(p.server_byte_s, 0);
  EXPECT_EQ(p.worker_byte_s, 0);
}

TEST(CalibrationTest, RefusesBadOptions) {
  for (CalibrationOptions bad :
       {CalibrationOptions{0, 1, 0}, CalibrationOptions{1 << 20, 0, 0},
        CalibrationOptions{1 << 20, 1, -1},
        CalibrationOptions{1 << 20, 1, 0, /*servers=*/0},
        CalibrationOptions{1 << 20, 1, 0, 1, /*busy_before_call_s=*/-1e-3},
        CalibrationOptions{1 << 20, 1, 0, 1, /*busy_before_call_s=*/2}}) {
    absl::StatusOr<Calibration> c = Calibrate(bad);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(c.status().message()), HasSubstr("calibration:"));
  }
}

}  // namespace
}  // namespace ringside
