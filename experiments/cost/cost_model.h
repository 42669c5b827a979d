// Cost model: predicted step time, utilization and speedup of each
// synchronization strategy from a handful of numbers (the α-β model of
// collective communication). Pure functions; thread-safe.
//
// Symbols (fields of CostInputs, experiments/cost/cost_types.h): t_c
// compute per step (s), M model bytes, T gradient tensors, n workers, K
// parameter servers, B link bandwidth (bytes/s, the same for every host's
// link), α per-message latency (s), F fusion threshold (bytes), τ fusion
// cycle time (s); for hierarchical, r ranks per host and the intra-host
// link's B_i and α_i (default: B, α); the CPU terms in CpuCosts' symbols.
//
// Each strategy's formula sits in its own file, experiments/cost/formulas/
// <name>_formula.cc, registered under the strategy's cost-model name
// (formulas/formula_registry.h; CostModelStrategies() lists them), its
// header comment the formula: its communication per step `comm`
// (seconds; bandwidth, latency and overhead terms), its CPU terms, its
// memory per rank, the bytes it sends, what of it starts in backward and
// how its update compares with one worker's. This comment holds what they
// share; PredictStep assembles their terms into a step as below.
//
// CPU terms (cpu_s; 0 unless CostInputs::cpu is calibrated), with M the
// model's bytes, n > 1 for the collective ones, and the ring steps counted
// as the α terms count messages. The collectives, at n > 1, add l_w once
// per step: the wake-up of the step's collectives, which start on cores
// that computed until then; calibrated after busy-waiting for the run's
// own compute per step, it stands for the later calls' stalls too, such as
// ring's second bucket right behind the first, which it covers only in
// part (docs/RESULTS.md); ring_fp16 pays its own fp16 all-reduce's l_h.
//
// Memory per rank (bytes; Prediction::worker_memory_bytes and
// server_memory_bytes), with P = M the parameters' bytes (float32) and s
// the optimizer's state per parameter (CostInputs::optimizer_state_per_param:
// plain SGD 0, SGD with momentum 1, Adam 2) -- ZeRO's accounting
// (Rajbhandari et al., SC'20) without activations.
//
// The zero stages' bandwidth term: with ring_critical_bytes R > 0 from the
// run it is R/B instead of the balanced formula's: a reduce-scatter and an
// all-gather forward 1 MiB pieces as they land (the busiest link's bytes,
// or the largest shard plus (n−2) pieces), and zero2's buckets and zero3's
// tensors mostly lie in one rank's shard, so their bytes go one way.
//
// d, the duplex factor of the parameter-server terms: d = 1 (default) when
// links are full-duplex and push and pull are pipelined by chunks, so the
// n·M flowing in and the n·M flowing out share the same seconds; d = 2
// when they do not overlap (`ps_push_pull_overlap = false`). With d = 1
// the pipeline fills and drains once per step: a server can serve chunk
// c only once all n workers' copies of it are in, and the last chunk's n
// pulls leave after the last push: overhead_s = 2·n·C/B, C the chunk
// (ps_chunk_bytes, else AutoChunkBytes(M, K), core/ps_chunks.h; at most a
// server's range M/K).
// Measured at 0.1 Gbit/s, n = 2, sps (mobilenet_v2): the step's excess over
// n·M/B grew with C at 0.35 s per MB, against 2n/B = 0.32 s per MB.
//
// The CPU terms that stream (streamed_cpu_s: the per-byte a_b, a_h, r_b,
// g_b, f_b, w and s terms and the ring steps' c_s; not l_w, l_h or ρ) and
// the link: on a wire of its own (CostInputs::cpu_streams_with_link: a
// NIC, a shaped link) the per-byte CPU work runs while the bytes are in
// flight, chunk by chunk, and a ring step's exchange while earlier bytes
// still drain (a sender's call ends once its bytes are in its socket), so
// the link adds only its seconds beyond them, wire = max(0, bandwidth −
// streamed cpu); where the cores move the link's bytes themselves
// (loopback, whose 1/B is the kernel's copies, measured) the two add,
// wire = bandwidth. comm = wire + latency + overhead + cpu. Measured at
// 1 Gbit/s (mobilenet_v2, n = 2): dps's servers' 25 ms of summing ran
// inside its 118 ms on the link; zero3's 473 calls a step took 357 ms,
// about its 41.4 MB of critical bytes at B (346 ms), where their 3T(n−1)
// ring steps count 30 ms more (docs/RESULTS.md).
//
// Step time = t_c + exposed, exposed = max(0, comm − u − o·t_c) + u,
// where o, the overlap fraction in [0, 1], is the share of compute during
// which communication can proceed (0, the default: none hidden), and u the
// calibrated CPU terms not hidden: they share the cores with the compute,
// so u = cpu, except for a strategy whose rounds run on a thread of their
// own (async_ps with a staleness bound, async_ps_formula.cc): o = 1, u the
// share of cpu the spare cores do not hide, step = max(t_c + u, comm), no
// shorter than its own cores' bound.
//
// Overlap with backward from when each gradient becomes ready
// (CostInputs::gradient_ready: tensors in backward's order, bytes m_i,
// ready at r_i from the compute's start; backward ends at r_last). Then o
// is not used. A strategy's overlappable seconds O are comm less u less
// its fixed overhead (fusion's τ, the servers' pipeline fill and drain),
// where u keeps the CPU terms that do not stream (the wake-ups) and, for
// real compute, the streamed ones too, and on loopback the link's seconds
// (the cores' copies): they need the cores the compute uses, while
// emulated compute sleeps and leaves them. O is spread over
// the strategy's calls (each formula says which), each a share α_c of the
// latency term (the formula's per-call latency) plus its bytes' share of
// the rest, and the calls run one after another on one communication
// thread, each starting once its last gradient is ready and the previous
// call has ended:
//   start_c = max(ready_c, end_{c−1}),  end_c = start_c + d_c,
//   exposed = max(0, end_last − r_last) + (what runs after backward)
//             + (the fixed overhead, but fusion's τ: its cycles) + u
// A strategy that starts nothing in backward hides nothing (o = 0).
//
// What nominal α-β terms miss, priced where the inputs give them (a
// cluster file does; compare's CPU runs do not): compute slows while the
// communication it hides runs beside it (kernels, SMs and memory
// bandwidth shared), by a share σ, and the framework pays a fixed cost a
// step (its hooks, bucket copies, launches), f, at n > 1:
//   exposed += σ · min(hidden, t_c) + f
// with hidden the communication seconds the compute hid (the simulated
// calls' in backward, else comm less exposed).
// Measured per tensor by every worker on the host (the final record's
// gradient_ready, worker/gradient_ready_times.h); predict takes the
// synthetic model's proportional schedule for a profile
// (ProportionalReadySchedule).
//
// The cores' demand (Prediction::cpu_demand_s), where the
// calibration knows the machine's C cores: the CPU seconds one step asks
// of all its processes together,
//   n · (t_c' + cpu_w) + cpu_s + W · c_w
// with t_c' the compute's own CPU time where measured (else t_c; emulated
// compute's only its synthetic gradients'), cpu_w a worker's CPU terms
// and cpu_s the servers' (the collectives: cpu_w = cpu, cpu_s = 0; the
// parameter servers, whose CPU terms are times on a worker's path, from
// one server's per-byte costs: cpu_w = M·w + ρ, cpu_s = n·M·s), W the
// bytes all the processes send a step (each formula's) and c_w
// the CPU a byte moved over the link costs in all (the link probe's,
// CostInputs::wire_cpu_byte_s). No step is shorter than the demand over
// the C cores (the cores' bound, Prediction::core_bound_s; async_ps with
// τ_s ≥ 1 has its own): the terms above price a step as if each
// process had cores of its own, the bound as if the cores ran their work
// perfectly packed. Contending processes run well short of that:
// measured at 8 Gbit/s (mobilenet_v2, 2 × 24 ms of emulated compute,
// n = 3, K = 3, 2 cores) the bound was the step for dps, ring and fusion
// (90.0, 69.7 and 66.9 ms against 118.8, 87.4 and 90.1 measured: −20% to
// −26%). validate_predictions.py reports the rows whose demand keeps most
// of the cores busy (core_share >= 0.8) apart.
//
// A run's measured window may hold plain steps a strategy takes first
// (PowerSGD's before it compresses): PredictMeasuredWindow prices those
// by the formula StrategyFormula::plain_first_steps names and takes the
// window's mean; PredictStep is the strategy's own, steady step.
//
// Then:
//   utilization        = t_c / step
//   speedup            = n · t_c / step    (throughput vs one worker)
//   scaling efficiency = speedup / n       (= utilization)
#ifndef RINGSIDE_EXPERIMENTS_COST_COST_MODEL_H_
#define RINGSIDE_EXPERIMENTS_COST_COST_MODEL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "experiments/cost/cost_types.h"

namespace ringside {

// The synthetic model's schedule (models/synthetic_model.h), for a model
// whose readiness was not measured: tensors `bytes` in backward's order,
// a forward of forward_fraction · compute_s, then each gradient ready at
// a time proportional to the bytes backward has produced by then.
std::vector<GradientReady> ProportionalReadySchedule(
    const std::vector<double>& bytes, double compute_s,
    double forward_fraction = 1.0 / 3.0);

// OK, or INVALID_ARGUMENT naming the first bad field and its value.
absl::Status ValidateCostInputs(const CostInputs& in);

// The CPU costs as JSON ({"allreduce_byte_s": ..., "cores": C}, keys as
// the field names) and back: CpuCostsFromJson reads the same keys (a
// compare.json's cost_model.calibration has them) and refuses a missing,
// non-numeric or negative one with INVALID_ARGUMENT naming it;
// collective_wake_s and the ps_sharded_ fields, which older runs did not
// measure, may be missing (0).
nlohmann::json CpuCostsJson(const CpuCosts& c);
absl::StatusOr<CpuCosts> CpuCostsFromJson(const nlohmann::json& j);

// How `strategy`'s update compares with one worker's (Updates, its
// formula's kind); kExact for an unknown strategy.
Updates UpdatesOf(absl::string_view strategy, int64_t staleness);
// "exact", "lossy (fp16 gradients)", "stale (τ=2)".
std::string UpdatesLabel(absl::string_view strategy, int64_t staleness);

// The memory formula of `strategy` in the file comment's symbols, e.g.
// "2P + s·P/n"; "" for an unknown strategy.
std::string MemoryFormula(absl::string_view strategy);

// Bytes one worker and one parameter server hold (0: the strategy has no
// servers) by `strategy`'s memory formula, for P = param_bytes, s, n and K
// (servers of dps; sps has one). INVALID_ARGUMENT for an unknown strategy,
// P <= 0, s < 0, n < 1 or K < 1.
absl::StatusOr<MemoryPerRank> PredictMemory(absl::string_view strategy,
                                            double param_bytes,
                                            double optimizer_state_per_param,
                                            int64_t workers, int64_t servers);

// The strategies the model knows, the registered formulas' names
// (formulas/formula_registry.h) in table order: baseline, sps, dps, ring,
// fusion, async_ps, hierarchical, ring_fp16, zero1, zero2, zero3.
std::vector<std::string> CostModelStrategies();

// Predicts one step of `strategy` under `in`. INVALID_ARGUMENT on bad
// inputs or an unknown strategy (listing the known ones).
absl::StatusOr<Prediction> PredictStep(absl::string_view strategy,
                                       const CostInputs& in);

// The plain steps of a measured window (PredictMeasuredWindow): how many
// of its steps were plain, the option that counted them, the formula that
// priced one and the two steps' predictions.
struct PlainStepsInWindow {
  int64_t steps = 0;  // 0: none (the window is the strategy's own steps)
  std::string option;
  std::string formula;
  double plain_step_s = 0;
  double own_step_s = 0;
};

// The mean step of a run's measured window, steps [first_step, first_step
// + steps): PredictStep's, except where `strategy`'s formula takes plain
// first steps (StrategyFormula::plain_first_steps; their count is the
// option's value in in.strategy_options, 0 where absent) and some of them
// lie in the window: then step_s is the mean of the plain formula's step
// over those and the strategy's over the rest, with utilization, speedup
// and scaling efficiency from it; the other terms stay the strategy's own
// steps'. `plain` (may be null) says what was weighed. INVALID_ARGUMENT as
// PredictStep's, and for steps < 1 or first_step < 0.
absl::StatusOr<Prediction> PredictMeasuredWindow(absl::string_view strategy,
                                                 const CostInputs& in,
                                                 int64_t first_step,
                                                 int64_t steps,
                                                 PlainStepsInWindow* plain);

// Predictions for n = 1, 2, 4, ... up to max_workers (inclusive when a
// power of two; max_workers itself is always the last n) for each
// strategy, grouped by strategy; baseline appears once (n = 1).
// INVALID_ARGUMENT on bad inputs (in.workers is ignored) or max_workers < 1.
absl::StatusOr<std::vector<Prediction>> PredictSweep(
    const std::vector<std::string>& strategies, const CostInputs& in,
    int64_t max_workers);

// Relative error of a prediction against a measurement:
// (predicted − measured) / measured; positive = the model over-predicts.
// INVALID_ARGUMENT unless measured > 0 and predicted >= 0 (both finite).
absl::StatusOr<double> PredictionError(double predicted, double measured);

// Markdown: a speedup table (rows n, one column per strategy, cells
// "speedup (efficiency)") then the detailed table (strategy, n, step,
// comm, exposed comm in ms, utilization, speedup, scaling efficiency,
// memory per worker and per server in MB).
std::string PredictionsMarkdown(const std::vector<Prediction>& predictions);

// One prediction as JSON: PredictionsJson's row.
nlohmann::json PredictionJson(const Prediction& p);

// {"inputs": {...}, "predictions": [{strategy, workers, servers, compute_s,
// bandwidth_s, latency_s, overhead_s, cpu_s, streamed_cpu_s, wire_s,
// comm_s, exposed_comm_s, step_s,
// utilization, speedup, scaling_efficiency, worker_memory_bytes,
// server_memory_bytes}, ...]}.
nlohmann::json PredictionsJson(const CostInputs& in,
                               const std::vector<Prediction>& predictions);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_COST_MODEL_H_
