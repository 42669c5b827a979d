// Calibration: the CPU costs the α-β model (cost_model.h) lacks, measured
// on this machine by small in-process benchmarks of ringside's own paths,
// for the model size of the run they will serve. compare measures them once
// per run, right after the baseline (whose final record gives M and T) and
// before any strategy runs, and every prediction of the run uses them.
// They are never fitted to the runs they predict: each benchmark times only
// its own traffic.
//
//   collectives       the workers' Collective (CreateGlooCollective, ring,
//                     its default paced event loop) between 2 ranks as
//                     threads over loopback TCP: AllReduce and
//                     ReduceScatter averaging (as ring, fusion, zero1 and
//                     the sharded gradients call them: the scaling pass
//                     after the sum counts) and AllGatherV, of M bytes
//                     and of 64 KiB, and ring_fp16's all-reduce (to fp16,
//                     GlooHalfAllReduce, back), each call from a barrier
//                     with idle cores (of each call the slowest rank's
//                     time; of 7-15 calls the median, for 64 KiB the
//                     fastest). The slope per byte a rank sends, less the
//                     loopback link's own 1/B (LinkEstimate, measured here
//                     too), is the CPU per byte of that operation
//                     (summation, copies, the transport's system calls);
//                     the 64 KiB all-reduce's time less its bytes and its
//                     2α, over its 2 ring steps, is the fixed cost of one
//                     ring step.
//   wake-up           the 64 KiB all-reduce (and ring_fp16's) again, each
//                     call as a training step's first collective starts:
//                     every rank busy until it calls, for
//                     busy_before_call_s (compare: the baseline's measured
//                     compute per step; 0 for emulated compute, which
//                     sleeps); the mean of 80 calls less the quiet call is
//                     the wake-up of a step's collectives (the transport's
//                     threads wait for cores its compute held), paid once
//                     per step (cost_model.h). It grows with how long the
//                     cores were busy (collective_bench --busy_us, here:
//                     0.24 ms from idle cores, 1.35 ms after 1-2 ms of
//                     busy-waiting, 2.3-2.5 ms after 4-8 ms), so it is
//                     measured after the run's own compute time; a big
//                     call's transfer runs through the stall (after 3.6 ms
//                     a 64 KiB all-reduce took 3.9 ms, a 4.5 MB one
//                     4.5-4.7 ms), which is why the per-byte costs come
//                     from quiet calls.
//   given-back pages  writing min(M, 64 MiB) into pages just given back
//                     with madvise(MADV_DONTNEED), as zero3's all-gathers
//                     do, against writing them into resident pages (the
//                     medians of 15 rounds): the difference per byte is
//                     the page faults and the zeroing of fresh pages.
//   parameter server  the workers' PsSession push+pull against one
//                     in-process server (LocalPsCluster) with SGD with
//                     momentum, M bytes in T tensors, with 1 and with 2
//                     workers (threads): each round's time less its link
//                     time n·M/B is CPU; the 2-worker round's extra over the
//                     1-worker round is the server's CPU per byte per worker
//                     (parsing, summing, serving the pull), the rest the
//                     worker's per step (chunking, copies into place) and
//                     the server's optimizer once per step; a 16 KiB model's
//                     round is the cost of one round. With `servers` K > 1
//                     the same rounds again against K servers (dps's and
//                     async_ps's key ranges, chunks and streams, the K
//                     servers sharing this machine's cores), for those two.
//   async_ps's rounds' CPU  the 1- and 2-worker rounds against async_ps's
//                     K servers again, this process's CPU time per round
//                     (workers' and servers' threads), beside a forked
//                     memory-streaming process per worker (its CPU is not
//                     counted), whatever the run's compute: these serve
//                     the cores' bound of async_ps (cost_model.h), which
//                     binds only on saturated cores, and there the rounds
//                     cost more CPU than on idle ones (2 cores, the MLP,
//                     K = 4: 2 workers' round 34-39 ms quiet, 42-47 ms
//                     beside two stand-ins; mobilenet_v2, K = 4: 69-71 ms
//                     quiet, 85-88 ms beside them). With emulated compute,
//                     which sleeps, the other workers' rounds are what
//                     saturates the cores (async_ps at n = 4 on 2 cores).
//   copies            one memcpy of M bytes between two buffers (the median
//                     of 7), per byte: async_ps's training thread copies
//                     its gradient out and the newest parameters in.
//   PowerSGD          its three thin products (powersgd_kernels.h) and
//                     its error-feedback passes on the model's matrices
//                     (CalibrationOptions::tensor_shapes, up to 64 MiB of
//                     them; not known: one square matrix of min(M, 64 MiB))
//                     at rank 2, the hook's default (medians of 7 each):
//                     per multiply-add (3·rows·cols·2 a matrix) and per
//                     element; other ranks are priced at the same rate
//                     per multiply-add.
//   top-k and sign    the all-gather hooks' compression (gather_kernels.h)
//                     on min(M, 64 MiB) split as the model's tensors
//                     (medians of 7): top-k's at ratio 0.01 per element
//                     (the selection is linear in the elements at any
//                     ratio), sign's packing and one rank's unpacking per
//                     element.
//
// Costs are clipped at 0. `cores` (the caller's) is how many servers' CPU
// work can proceed at once on this machine.
//
// Blocking: a few seconds for a 100 MB model on 2 cores; every call and
// wait is bounded by `timeout`. Not thread-safe (it uses the machine).
#ifndef RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_H_
#define RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/cost/cost_model.h"

namespace ringside {

struct CalibrationOptions {
  int64_t model_bytes = 0;  // M, > 0 (capped at 256 MiB for the benchmarks)
  int64_t num_tensors = 1;  // T, >= 1
  int cores = 0;            // CpuCosts::cores; 0: unlimited
  int servers = 1;          // K of dps and async_ps, >= 1
  // How long every rank busy-waits before each busy-start call (seconds,
  // in [0, 1]): the compute a step's first collective follows.
  double busy_before_call_s = 2e-3;
  absl::Duration timeout = absl::Seconds(120);
  // The tensors' shapes in the layout's order (the baseline's record's);
  // empty: not known.
  std::vector<std::vector<int64_t>> tensor_shapes;
  // The rank r PowerSGD's products are timed at (its per-multiply-add cost
  // depends on r): the rank a study runs ring_powersgd at; >= 1.
  int64_t lowrank_rank = 2;
};

// One parameter-server calibration: its rounds (seconds) and the costs
// from them (CpuCosts' w, s and ρ).
struct PsCalibration {
  int servers = 0;  // K the rounds ran against (0: not measured)
  double round_1_s = 0, round_2_s = 0, round_small_s = 0;
  // w and s; ρ is round_small_s, the 16 KiB model's round
  double worker_byte_s = 0, server_byte_s = 0;
};

// async_ps's rounds' CPU time (every thread's: workers' and servers'),
// beside compute stand-ins (calibration_benchmarks.cc's ComputeStandIns:
// one memory-streaming process per worker).
struct PsRoundCpu {
  int servers = 0;  // K the rounds ran against (0: not measured)
  double round_1_cpu_s = 0, round_2_cpu_s = 0;  // seconds per round
  // per model byte: the 1-worker round's, and each further worker's
  double byte_s = 0, worker_byte_s = 0;
};

struct Calibration {
  CpuCosts cpu;
  // The loopback link the costs are net of, and the raw timings behind
  // them (seconds per call or round), for the report.
  double loopback_bandwidth_Bps = 0;
  double loopback_latency_s = 0;
  double allreduce_s = 0, allreduce_small_s = 0, allreduce_small_busy_s = 0;
  double reduce_scatter_s = 0, allgather_s = 0, half_allreduce_s = 0;
  double reduce_scatter_small_s = 0, allgather_small_s = 0;
  double half_allreduce_small_s = 0, half_allreduce_small_busy_s = 0;
  // The small calls' bytes per rank (the all-reduce's; the reduce-scatter
  // and the all-gather send half of them at 2 ranks).
  int64_t small_bytes = 0;
  // ring_fp16's conversions of the benchmark's floats to fp16 and back.
  double half_convert_s = 0;
  // PowerSGD's products and error-feedback passes on lowrank_matrices
  // matrices at lowrank_rank, and the multiply-adds and elements they
  // covered.
  int64_t lowrank_matrices = 0, lowrank_rank = 0;
  double lowrank_multiply_adds = 0, lowrank_elements = 0;
  double lowrank_products_s = 0, lowrank_feedback_s = 0;
  // The all-gather hooks' compression on gather_elements elements.
  double gather_elements = 0;
  double topk_s = 0, sign_pack_s = 0, sign_add_s = 0;
  // Writing refault_bytes into resident pages and into given-back ones.
  double resident_write_s = 0, refault_write_s = 0;
  int64_t refault_bytes = 0;
  PsCalibration ps;          // against one server (sps; CpuCosts' ps_*)
  PsCalibration ps_tcp;      // the same over the bulk path (ps_tcp_*)
  PsCalibration ps_sharded;  // against K > 1 (CpuCosts' ps_sharded_*)
  PsRoundCpu ps_round_cpu;   // against K (CpuCosts' ps_round_cpu_*)
  double busy_before_call_s = 0;  // CalibrationOptions'
  int64_t benchmark_bytes = 0;  // the M the benchmarks moved
  double wall_s = 0;            // the calibration's own time
};

// The derivations the calibration applies to its timings, for its tests.
//
// Seconds per byte of the slope between a big and a small call's times,
// less the link's 1/B; clipped at 0 (and 0 when big_bytes <= small_bytes).
double CpuPerByte(double big_s, double small_s, double big_bytes,
                  double small_bytes, double bandwidth_Bps);
// A parameter server's w and s (worker_byte_s, server_byte_s) from its
// 1- and 2-worker rounds of `model_bytes` and its small round ρ: a round at
// n workers is n·M/B + ρ + M·w + n·M·s, each CPU part clipped at 0.
void SplitPsCpu(double model_bytes, double bandwidth_Bps, PsCalibration* p);

// Measures the costs (file comment). INVALID_ARGUMENT on bad options; the
// first benchmark's error otherwise.
absl::StatusOr<Calibration> Calibrate(const CalibrationOptions& options);

// One line for reports: "Calibration (measured here, 3.1 s, M = 4.5 MB):
// all-reduce 0.95 ns/B + 120 µs/call, reduce-scatter ..., parameter server
// worker 0.8 ns/B, server 0.3 ns/B per worker, 150 µs/round; 2 cores".
std::string CalibrationLine(const Calibration& c);

// The costs (CpuCostsJson, which CpuCostsFromJson reads back) and the raw
// timings as JSON (keys as the field names).
nlohmann::json CalibrationJson(const Calibration& c);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_H_
