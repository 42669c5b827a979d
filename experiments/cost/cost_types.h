// The cost model's inputs and outputs (CostInputs, Prediction and what they
// hold), shared by experiments/cost/cost_model.h, which explains the model
// and its symbols, and the per-strategy formulas in
// experiments/cost/formulas/. Plain data; no functions.
#ifndef RINGSIDE_EXPERIMENTS_COST_COST_TYPES_H_
#define RINGSIDE_EXPERIMENTS_COST_COST_TYPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ringside {

// The CPU costs of ringside's own paths that the α-β terms leave out
// (calibration.h measures them on a machine; all 0, the default: an
// uncalibrated model). Per byte: seconds per byte a rank sends in that
// operation beyond the link's 1/B; the parameter server's per model byte.
struct CpuCosts {
  double allreduce_byte_s = 0;       // a_b: all-reduce (summation, copies)
  // a_h: ring_fp16's all-reduce, per fp16 byte sent (with the float32
  // conversions)
  double half_allreduce_byte_s = 0;
  double reduce_scatter_byte_s = 0;  // r_b: reduce-scatter
  double allgather_byte_s = 0;       // g_b: all-gather
  // c_s: one ring step of a collective (a message exchange with its
  // handshake and wake-ups); an all-reduce has 2(n−1), a reduce-scatter or
  // all-gather n−1
  double collective_step_s = 0;
  // l_w: waking a step's collectives on cores busy with its compute (the
  // transport's threads wait for a core; calibration.h measures it after
  // busy-waiting as long as the run's compute), once per step at n > 1
  double collective_wake_s = 0;
  // l_h: the same for ring_fp16's fp16 all-reduce (Gloo's own ring over
  // its fp16 pairs), from that call's own busy and quiet small calls; 0,
  // unmeasured (a compare run from before it was): ring_fp16 pays l_w
  double half_collective_wake_s = 0;
  // v_h: ring_fp16's conversions per model byte, float32 to fp16 and back
  // on the whole buffer, which run at every n (at n > 1 a_h holds them
  // too: the calibration's fp16 all-reduce converts)
  double half_convert_byte_s = 0;
  // f_b: writing a byte into a page given back to the kernel
  // (madvise(MADV_DONTNEED), TensorShards::Release) beyond writing it into
  // a resident one: the page fault and the kernel's zeroing of the page
  double refault_byte_s = 0;
  double ps_worker_byte_s = 0;       // w: a worker's push+pull, per step
  double ps_server_byte_s = 0;       // s: a server's, per worker per step
  double ps_round_s = 0;             // ρ: one push+pull round
  // w, s and ρ of the bulk data path (--ps_transport=tcp), against one
  // server; the parameter-server formulas use them for a run over it.
  // ρ = 0: not measured (the gRPC terms stand in).
  double ps_tcp_worker_byte_s = 0;
  double ps_tcp_server_byte_s = 0;
  double ps_tcp_round_s = 0;
  // w_K, s_K, ρ_K: the same measured against K = ps_sharded_servers
  // servers sharing this machine's cores (their parallelism included); dps
  // and async_ps use them when their K is that K. 0 servers: not measured.
  int ps_sharded_servers = 0;
  double ps_sharded_worker_byte_s = 0;
  double ps_sharded_server_byte_s = 0;
  double ps_sharded_round_s = 0;
  // q_1, q_w: async_ps's push+pull rounds' CPU time (workers' and
  // servers' threads together) per model byte, for one worker's round and
  // for each further worker's, measured against K = ps_round_cpu_servers
  // servers beside the compute (calibration.h); the cores' bound of
  // async_ps uses them when its K is that K. 0 servers: not measured.
  int ps_round_cpu_servers = 0;
  double ps_round_cpu_byte_s = 0;
  double ps_round_cpu_worker_byte_s = 0;
  // x: copying a byte from one buffer into another (async_ps's training
  // thread copies its gradient out and the newest parameters in, M bytes
  // each, every step)
  double copy_byte_s = 0;
  // p_m: one multiply-add of PowerSGD's thin products (M·Q, Mᵀ·P and
  // P·Qᵀ of a rows × cols gradient matrix M at rank r: 3·rows·cols·r of
  // them a step), and p_e: one element of its error-feedback passes over
  // a compressed bucket (the error added, kept, and the result taken
  // from it); measured at rank 2 (calibration.h)
  double lowrank_multiply_add_s = 0;
  double error_feedback_element_s = 0;
  // p_k: top-k's compression per element (the error added, the selection,
  // the sent elements' error cleared), measured at ratio 0.01; p_s and
  // p_a: sign's packing per element, and adding one rank's signs per
  // element (each rank's message is added on every rank) (calibration.h)
  double topk_element_s = 0;
  double sign_pack_element_s = 0;
  double sign_add_element_s = 0;
  // C: servers whose CPU work can run at once (the cores of the machine
  // they share); 0: all K.
  int cores = 0;

  bool calibrated() const {
    return allreduce_byte_s > 0 || half_allreduce_byte_s > 0 ||
           reduce_scatter_byte_s > 0 ||
           allgather_byte_s > 0 || collective_step_s > 0 ||
           collective_wake_s > 0 || half_collective_wake_s > 0 ||
           half_convert_byte_s > 0 ||
           refault_byte_s > 0 ||
           ps_sharded_worker_byte_s > 0 || ps_sharded_server_byte_s > 0 ||
           ps_sharded_round_s > 0 || ps_round_cpu_byte_s > 0 ||
           ps_round_cpu_worker_byte_s > 0 || copy_byte_s > 0 ||
           lowrank_multiply_add_s > 0 || error_feedback_element_s > 0 ||
           topk_element_s > 0 || sign_pack_element_s > 0 ||
           sign_add_element_s > 0 ||
           ps_worker_byte_s > 0 || ps_server_byte_s > 0 || ps_round_s > 0;
  }
};

// One gradient of a step's backward: its bytes and when it becomes ready,
// in seconds from the step's compute start.
struct GradientReady {
  double bytes = 0;
  double ready_s = 0;
};

struct CostInputs {
  // t_c: compute (forward + backward + local optimizer) per step, seconds,
  // > 0.
  double compute_s = 0.1;
  // t_c': the compute's own CPU time per step where the run measured it
  // (the training thread's CPU clock, which leaves out the time it waited
  // for a core), >= 0; 0: not measured. Only async_ps with τ ≥ 1 uses it:
  // its rounds run during the compute on the same cores, so the compute's
  // wall time t_c already holds the part of their CPU work that took the
  // compute's cores, which u counts again; its step uses min(t_c, t_c').
  double compute_cpu_s = 0;
  // true: the compute is emulated (--emulated_compute_ms): it sleeps,
  // holding its training thread for t_c but no core, so async_ps's step
  // keeps t_c and its cores' bound counts only t_c', the CPU time of the
  // gradients the synthetic model writes (0 where not measured).
  bool compute_emulated = false;
  // y: busy CPU seconds per byte moved over the run's link beyond what a
  // byte moved on loopback costs (a shaped link's probe, link_probe.h:
  // cpu_byte_s − loopback_cpu_byte_s, at least 0), >= 0; 0: loopback, or
  // not measured. Only async_ps's cores' bound uses it
  // (formulas/async_ps_formula.cc).
  double link_cpu_byte_s = 0;
  // The busy CPU seconds per byte moved over the run's link in all (a
  // shaped link's probe, link_probe.h: cpu_byte_s, loopback's share
  // included), >= 0; 0: not measured. Only the cores' demand uses it.
  double wire_cpu_byte_s = 0;
  // M: bytes of gradients (= parameters) exchanged per step, > 0.
  double model_bytes = 0;
  // T: number of gradient tensors, >= 1.
  int64_t num_tensors = 1;
  // The gradient tensors' shapes in the layout's order (the model's, as the
  // worker's final record or a profile gives them; the formulas that
  // compress matrices read them: ring_powersgd); empty: not known.
  std::vector<std::vector<int64_t>> tensor_shapes;
  // n: data-parallel workers, >= 1.
  int64_t workers = 1;
  // K: parameter servers of dps, >= 1 (sps always has one).
  int64_t servers = 1;
  // sps's server beside rank 0, behind its link (PyTorch DataParallel's
  // layout; compare's placement=rank0): rank 0 reaches it without the
  // link, and that link carries the other n − 1 workers' bytes.
  bool servers_beside_rank0 = false;
  // B: bandwidth of every link, bytes/s, > 0 (25 Gbit/s = 3.125e9).
  double bandwidth_Bps = 25e9 / 8;
  // α: latency of one message, seconds, >= 0.
  double latency_s = 5e-6;
  // F: fusion threshold, bytes, >= 0; 0 = fusion off (one all-reduce per
  // tensor), as the worker's --fusion_threshold_bytes.
  double fusion_threshold_bytes = 64.0 * 1024 * 1024;
  // τ: fusion cycle time, seconds, >= 0.
  double cycle_s = 1e-3;
  // o: share of compute that communication can overlap, in [0, 1]; used
  // only where gradient_ready is empty.
  double overlap = 0;
  // When each gradient becomes ready in backward, in that order (the
  // reference run's measured gradient_ready, or a profile's schedule);
  // empty: not known, and o holds. Known, it replaces o: the strategies
  // that start communicating in backward (ring, ring_fp16, hierarchical
  // and zero2 by buckets, fusion by cycles, dps by chunks) are simulated
  // call by call (cost_model.h), the others overlap nothing.
  std::vector<GradientReady> gradient_ready;
  // ring's gradient buckets (the worker's --ring_bucket_kb and
  // --ring_first_bucket_kb, in bytes), >= 0; bucket_bytes 0 = one
  // all-reduce per tensor.
  double bucket_bytes = 25.0 * 1024 * 1024;
  double first_bucket_bytes = 1024.0 * 1024;
  // The zero stages' rings as a run reported them (the final record's
  // ring_critical_bytes per step): the bytes the busiest link carries one
  // after another, more than the balanced formula's when a collective's
  // shards are uneven; >= 0; 0 = the balanced formula.
  double ring_critical_bytes = 0;
  // C: the parameter servers' chunk in bytes (the worker's --chunk_kb),
  // >= 0; 0 = AutoChunkBytes(M, K), the workers' default.
  double ps_chunk_bytes = 0;
  // τ_s: async_ps's staleness bound (--staleness), >= 0; 0 = synchronous.
  int64_t staleness = 0;
  // r: hierarchical's and byteps's ranks per host, >= 0; 0 = all n
  // workers on one host.
  int64_t ranks_per_host = 0;
  // byteps's summation servers (a cluster file's servers_per_node and
  // server_hosts), >= 0: s on each of the h worker hosts, sharing their
  // links, and X on hosts (and links) of their own, K = s·h + X of them;
  // both 0: K = servers, every one on a host of its own (compare's layout:
  // each server process behind its own link).
  int64_t servers_per_host = 0;
  int64_t server_hosts = 0;
  // The strategy's own worker flags (names without "--", as in
  // StrategyInfo::options and StrategyFormula::options) and their values as
  // text: the run's (its final record's strategy_options), or predict's
  // and compare's flags. A formula reads an option of its own strategy
  // here (OptionNumber, formula_support.h), so that adding one touches the
  // strategy's files and its formula only. The knobs the shared machinery
  // reads (the buckets, the chunk, τ_s, r) are the typed fields above.
  std::map<std::string, std::string> strategy_options;
  // B_i, α_i: the intra-host link of hierarchical; 0 (B_i) or < 0 (α_i):
  // the same as B and α.
  double intra_bandwidth_Bps = 0;
  double intra_latency_s = -1;
  // true: the link is a wire of its own (a NIC, a shaped link), and the
  // CPU terms' per-byte part streams alongside its transfers (the file
  // comment); false: the cores move the link's bytes (loopback), and the
  // two add.
  bool cpu_streams_with_link = true;
  // Parameter servers: true (d = 1) when push and pull share the seconds
  // of a full-duplex link; false (d = 2) when they follow one another.
  bool ps_push_pull_overlap = true;
  // s: optimizer state per parameter (plain SGD 0, SGD with momentum 1,
  // Adam 2: OptimizerConfig::StateFloatsPerParameter), for the memory
  // formulas; >= 0.
  double optimizer_state_per_param = 1;
  // σ: the share by which compute slows while communication runs beside
  // it (kernels, SMs and memory bandwidth shared with the collectives'),
  // >= 0: the communication hidden behind the compute costs σ times its
  // seconds in compute; 0: not priced (compare's CPU runs, where the
  // cores' contention is the model's domain check instead).
  double compute_slowdown = 0;
  // f: the framework's fixed cost of synchronizing a step (its hooks,
  // bucket copies and launches), seconds, >= 0, at n > 1; 0: not priced.
  double sync_fixed_s = 0;
  // W_g: workers whose parameter-server traffic crosses one link (a
  // cluster's GPUs per node beyond one node: one NIC per node shared by
  // its GPUs), >= 1; 1: each worker behind a link of its own (compare).
  int64_t workers_per_link = 1;
  // The CPU terms (calibration); all 0: none.
  CpuCosts cpu;
};

// A prediction whose processes' CPU demand keeps at least this share of
// the cores busy (Prediction::core_share) is core-bound: the cores, not
// the link, decide its step, and the model prices their contention only
// as a bound (cost_model.h). The report and validate_predictions.py
// (CORE_BOUND_SHARE) keep such rows apart.
inline constexpr double kCoreBoundShare = 0.8;

struct Prediction {
  std::string strategy;  // one of CostModelStrategies()
  int64_t workers = 1;   // n the prediction is for (1 for baseline)
  int64_t servers = 0;   // parameter-server processes (0, 1 or K)
  double compute_s = 0;  // t_c
  // the compute the step counts: t_c, or async_ps's min(t_c, t_c')
  double step_compute_s = 0;
  // comm = wire_s + latency_s + overhead_s + cpu_s (seconds per step).
  double bandwidth_s = 0;  // bytes / B terms
  double latency_s = 0;    // α terms
  // fusion: the cycle τ; sps, dps, async_ps: the chunk pipeline's fill
  // and drain, 2·n·C/B; else 0
  double overhead_s = 0;
  double cpu_s = 0;        // the calibrated CPU terms (CpuCosts); else 0
  // the part of cpu_s that streams with the link: per byte, ring steps
  double streamed_cpu_s = 0;
  // bandwidth_s beyond streamed_cpu_s on a wire of its own, else
  // bandwidth_s (CostInputs::cpu_streams_with_link)
  double wire_s = 0;
  double comm_s = 0;
  // the CPU terms the compute hides (async_ps on spare cores: h·cpu);
  // else 0
  double hidden_cpu_s = 0;
  // The cores' bound on its step (cost_model.h): async_ps's with τ ≥ 1,
  // the others' cpu_demand_s / C; 0 unmeasured or without a core
  // limit. Where it is the step, the cores, not the link, decided it.
  double core_bound_s = 0;
  // The CPU seconds a step asks of the machine's cores, every process's
  // (cost_model.h's cores' demand); 0 where cpu.cores is 0 (no limit:
  // predict's clusters), and the share of the cores it keeps busy over
  // the step, cpu_demand_s / (C · step_s) (at most 1 but for async_ps's
  // own bound): near 1, the cores rather than the link set the pace.
  double cpu_demand_s = 0;
  double core_share = 0;
  // max(0, comm − u − o·t_c) + u, u = cpu − hidden (or, with
  // CostInputs::gradient_ready, the simulated calls' end past backward's
  // plus what runs after backward); at least the cores' bound less the
  // compute
  double exposed_comm_s = 0;
  // the communication hidden behind backward by the simulated calls (0
  // without CostInputs::gradient_ready or for a strategy that starts
  // communicating only after backward)
  double backward_hidden_s = 0;
  // What the cost model adds beside the α-β terms (CostInputs): σ times
  // the communication hidden behind the compute, and f at n > 1; both in
  // exposed_comm_s.
  double contention_s = 0;
  double sync_fixed_s = 0;
  // Whether its communication runs while the compute does: calls it
  // starts in backward (with CostInputs::gradient_ready, a strategy whose
  // SimulateBackward runs them), calls its formula says run beside the
  // compute unpriced (zero3's prefetched all-gathers), a background
  // thread's rounds, or an overlap share o > 0. Its transport's threads
  // then want cores while the compute holds them.
  bool communicates_during_compute = false;
  double step_s = 0;              // t_c + exposed
  double utilization = 0;         // t_c / step
  double speedup = 0;             // n · t_c / step
  double scaling_efficiency = 0;  // speedup / n
  // Memory per rank (each strategy's formula, experiments/cost/formulas/):
  // what one worker holds, and one parameter server (0 without servers).
  double worker_memory_bytes = 0;
  double server_memory_bytes = 0;
};

// How a strategy's update compares with one worker's on the whole batch:
// kExact, the same update to float rounding (what the equivalence oracle
// checks at 1e-5); kLossy, gradients rounded on the wire (ring_fp16's
// fp16); kStale, gradients applied up to τ_s steps late (async_ps with a
// staleness bound τ_s ≥ 1); kLocal, each worker's own gradients applied for
// H steps between parameter averages (local_sgd, diloco). Rankings by
// throughput keep the exact ones apart from the others, whose samples can
// buy less loss: only a time to a target loss puts them on one scale.
enum class Updates { kExact, kLossy, kStale, kLocal };

// Bytes one worker and one parameter server hold (0: the strategy has no
// servers) by a strategy's memory formula.
struct MemoryPerRank {
  double worker_bytes = 0;
  double server_bytes = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_COST_TYPES_H_
