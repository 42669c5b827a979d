// Cost model: predicted step time, utilization and speedup of each
// synchronization strategy from a handful of numbers (the α-β model of
// collective communication). Pure functions; thread-safe.
//
// Symbols (fields of CostInputs): t_c compute per step (s), M model bytes,
// T gradient tensors, n workers, K parameter servers, B link bandwidth
// (bytes/s, the same for every host's link), α per-message latency (s),
// F fusion threshold (bytes), τ fusion cycle time (s); for hierarchical, r
// ranks per host and the intra-host link's B_i and α_i (default: B, α).
//
// Communication per step, `comm` (seconds), for n workers:
//
//   baseline  0                                      (always one worker)
//   ring      n = 1: 0; else one all-reduce per bucket of gradients, as
//             DDP buckets them (a first bucket of first_bucket_bytes, then
//             bucket_bytes each; --ring_first_bucket_kb, --ring_bucket_kb):
//             b_r = min(T, 1 + ⌈max(0, M − first)/bucket⌉) all-reduces
//             (b_r = T, one per tensor, with bucket_bytes = 0):
//               2(n−1)/n · M/B + b_r · 2(n−1)α
//   ring_fp16 n = 1: 0; else one all-reduce of fp16 halves per bucket
//             (ring's b_r), M/2 on the wire:
//               2(n−1)/n · (M/2)/B + b_r · 2(n−1)α
//   fusion    n = 1: τ (its background thread cycles all the same: at
//             n = 1 on the 2-core VM the MLP's step took 1.0–1.1 ms more
//             than its compute, τ = 1 ms); else b fused all-reduces,
//             b = min(T, ⌈M/F⌉)
//             (b = T when F = 0: fusion off), plus one cycle of waiting
//             for the background thread and one control all-reduce (the
//             response-cache bit vector) per step:
//               2(n−1)/n · M/B + b · 2(n−1)α + τ + 2(n−1)α
//   sps       every worker pushes M to the one server and pulls M back, so
//             the server's link carries n·M in and n·M out:
//               d · n·M/B + 2α + 2·n·C/B
//   dps       each worker's link carries M each way, each of the K
//             servers' links n·M/K each way (byte-balanced key ranges):
//               d · max(M/B, n·M/(K·B)) + 2α + 2·n·C/B
//   (sps, dps, async_ps: 2·n·C/B, overhead_s, is the chunk pipeline's
//   fill and drain with d = 1, below; none with d = 2)
//   async_ps  as dps; with a staleness bound τ_s ≥ 1 (staleness) the
//             push+pull of step t runs on a background thread while the
//             worker computes the next steps, so all of it overlaps
//             compute (o = 1 for this strategy): the step is the slower of
//             the two, max(t_c, comm); τ_s = 0 waits every round trip, as
//             dps
//   hierarchical  n = 1: 0; else, with r ranks per host (ranks_per_host,
//             0: all n on one host) and h = ⌈n/r⌉ hosts, per bucket (ring's
//             b_r) Horovod's hierarchical all-reduce: a reduce-scatter
//             within the host (the intra-host link B_i, α_i), an all-reduce
//             of each rank's 1/r shard among its h peers across hosts (B,
//             α; the host's r shards share its link) and an all-gather
//             within the host:
//               2(r−1)/r · M/B_i + 2(h−1)/h · M/B
//                 + b_r · [2(r−1)α_i + 2(h−1)α]
//   zero1     n = 1: 0; else one all-reduce of the whole gradient buffer,
//             then one all-gather of the updated parameters (each rank
//             sends its shard (n−1) times, receives the others'):
//               3(n−1)/n · M/B + 3(n−1)α
//   zero2     n = 1: 0; else a reduce-scatter of the gradients (in DDP's
//             buckets; the α term counts one) and one all-gather of the
//             parameters (an all-reduce's bytes):
//               2(n−1)/n · M/B + 2(n−1)α
//   (zero1, zero2, zero3: with ring_critical_bytes R > 0 from the run, the
//   bandwidth term is R/B instead: a reduce-scatter and an all-gather
//   forward 1 MiB pieces as they land (the busiest link's bytes, or the
//   largest shard plus (n−2) pieces), and zero2's buckets and zero3's
//   tensors mostly lie in one rank's shard, so their bytes go one way)
//   zero3     n = 1: 0; else per tensor an all-gather before forward,
//             another before backward and a reduce-scatter of its
//             gradient (1.5× an all-reduce's bytes):
//               3(n−1)/n · M/B + T · 3(n−1)α
//
// CPU terms (cpu_s; 0 unless CostInputs::cpu is calibrated), in CpuCosts'
// symbols, with M the model's bytes, n > 1 for the collective ones, and
// the ring steps counted as the α terms count messages:
//   ring, fusion  2(n−1)/n · M · a_b + calls · 2(n−1) · c_s
//             (calls: b_r; fusion b + 1)
//   ring_fp16 2(n−1)/n · (M/2) · a_h + b_r · 2(n−1) · c_s  (its wake-up
//             l_h, measured on its own fp16 all-reduce, rather than l_w);
//             n = 1: M · v_h, its conversions alone (they run at every n;
//             at n = 1 on the 2-core VM its step took 0.7–0.8 ms more than
//             its compute for the MLP's 4.5 MB)
//   hierarchical  (r−1)/r · M · (r_b + g_b) + 2(h−1)/h · (M/r) · a_b
//             + b_r · (2(r−1) + 2(h−1)) · c_s
//   zero1     2(n−1)/n · M · a_b + (n−1)/n · M · g_b + 3(n−1) · c_s
//   zero2     (n−1)/n · M · (r_b + g_b) + (b_r + 1)(n−1) · c_s
//   zero3     (n−1)/n · M · (2 g_b + r_b + 2 f_b) + 3T(n−1) · c_s
//             (f_b: each all-gather writes the other ranks' (n−1)/n of M
//             into pages zero3 gave back after their last use, which fault
//             in again; the gradients' pages likewise, but those faults
//             fall in the backward, so in the measured compute t_c)
//   (each of these, at n > 1, + l_w once per step: the wake-up of the
//   step's collectives, which start on cores that computed until then;
//   calibrated after busy-waiting for the run's own compute per step, it
//   stands for the later calls' stalls too, such as ring's second bucket
//   right behind the first, which it covers only in part (docs/RESULTS.md);
//   ring_fp16 pays its own fp16 all-reduce's l_h)
//   sps       M · w + n · M · s + ρ
//   dps, async_ps  M · w_K + n · M · s_K + ρ_K when calibrated against
//             their K servers; else M · w + n · M · s / min(K, C) + ρ
//             (C: cores, else K)
//
// Memory per rank (bytes; Prediction::worker_memory_bytes and
// server_memory_bytes), with P = M the parameters' bytes (float32) and s
// the optimizer's state per parameter (CostInputs::optimizer_state_per_param:
// plain SGD 0, SGD with momentum 1, Adam 2) -- ZeRO's accounting
// (Rajbhandari et al., SC'20) without activations:
//   baseline, ring, fusion,  worker (2 + s)·P      parameters, gradients, state
//   hierarchical, ring_fp16
//   sps, dps, async_ps       worker 2P             parameters, gradients;
//                            each server (2 + s)·P/K  (sps: K = 1) its key
//                            range's parameters, state and one accumulator
//   zero1                    worker 2P + s·P/n     state sharded
//   zero2                    worker P + (1 + s)·P/n  gradients too (plus
//                            the gradients not yet reduce-scattered,
//                            which the formula leaves out, as ZeRO's does)
//   zero3                    worker (2 + s)·P/n  parameters too (plus the
//                            tensors gathered at once, which the formula
//                            leaves out, as ZeRO's does)
//
// d, the duplex factor of the parameter-server terms: d = 1 (default) when
// links are full-duplex and push and pull are pipelined by chunks, so the
// n·M flowing in and the n·M flowing out share the same seconds (the
// issue's "sps n·M/B"); d = 2 when they do not overlap
// (`ps_push_pull_overlap = false`). With d = 1 the pipeline fills and
// drains once per step: a server can serve chunk c only once all n workers'
// copies of it are in, and the last chunk's n pulls leave after the last
// push: overhead_s = 2·n·C/B, C the chunk (ps_chunk_bytes, else
// AutoChunkBytes(M, K), core/ps_chunks.h; at most a server's range M/K).
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
// so u = cpu, except for async_ps with a staleness bound, whose rounds run
// on a thread of their own (o = 1): the cores beyond the n training
// threads run their CPU work, shared among the threads that want it
// then, the n rounds' and the K servers', so the hidden share is
//   h = clamp((C − n) / (n + K), 0, 1)   (C = 0, no limit: h = 1)
// and u = (1 − h)·cpu: step = max(t_c + u, comm). On 2 cores h = 0 at
// n >= 2 and 0.2 at n = 1 with K = 4; on 16 cores h = 1 up to n = 6.
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
// the strategy's calls, each a share α_c of the latency term (the
// formula's per-call latency) plus its bytes' share of the rest, and the
// calls run one after another on one communication thread, each starting
// once its last gradient is ready and the previous call has ended:
//   start_c = max(ready_c, end_{c−1}),  end_c = start_c + d_c,
//   exposed = max(0, end_last − r_last) + (what runs after backward) + u
//   ring, ring_fp16, hierarchical  the buckets (first_bucket_bytes, then
//             bucket_bytes each, in backward's order; one per tensor with
//             bucket_bytes 0), all of O
//   zero2     the same buckets carry its reduce-scatter, half of O; its
//             all-gather, the other half, follows the optimizer
//   fusion    cycles: the runtime wakes one τ after the first gradient,
//             then each cycle (at most every τ) all-reduces every
//             gradient ready by its start, in calls of at most F bytes,
//             plus one control all-reduce; τ is not added again
//   dps       the pushes stream as the gradients become ready (its
//             workers push a chunk once its tensors are ready); the pulls
//             follow each chunk, which the fill and drain term covers
//   sps, zero1, zero3, async_ps, baseline  nothing starts in backward
//             (async_ps with τ_s ≥ 1 runs in the background, as below)
// Measured per tensor by every worker on the host (the final record's
// gradient_ready, worker/gradient_ready_times.h); predict takes the
// synthetic model's proportional schedule for a profile
// (ProportionalReadySchedule).
//
// And no step of it is shorter than the CPU work of all its processes
// over the C cores of the machine they share (the cores' bound; where C
// and the rounds' CPU against its K servers were calibrated, q_1 and q_w
// per model byte, measured beside compute stand-ins whatever the run's
// compute, since the bound binds only on saturated cores, calibration.h;
// C = 0, no core limit, as predict sets for a cluster: none):
//   step >= [n·(t_c + 2·M·x) + M·(q_1 + (n − 1)·q_w) + 2·n·M·y] / C
// (t_c as below; for emulated compute, which sleeps, its CPU time t_c'
// where measured, else 0: the synthetic model still writes its gradients,
// 7-14 ms of CPU a step for mobilenet_v2's 3.5 M parameters)
// (x a byte's copy: each step its training thread copies its gradient out
// and the newest parameters in)
// (y the CPU a byte moved costs on the run's link beyond loopback's, where
// the rounds were calibrated (CostInputs::link_cpu_byte_s: a shaped link's
// veths, bridge and htb, measured by its probe, job/link_probe.h; 0 on
// loopback); each step moves 2·n·M bytes, n pushes and n pulls of M. At
// 1 Gbit/s, n = 4 (mobilenet_v2, emulated compute, 8 processes) the
// machine was 90.5% busy, 345 ms of CPU a step, where q and x accounted
// for 192.) The formula above packs the rounds' CPU perfectly beside the
// compute's; on saturated cores they run slower than
// their quiet calibration (u): on 2 cores at n = 2 (loopback, the MLP,
// 4 servers) a quiet 2-worker round took 34-39 ms of CPU, 45-47 ms beside
// two stand-ins, and async_ps's processes used 70 ms of CPU a step.
// There t_c is min(t_c, t_c') where the run measured the compute's CPU
// time t_c' (CostInputs::compute_cpu_s): on busy cores the compute's wall
// time holds the rounds' CPU work that ran on its cores, which u counts.
// Measured on 2 cores (loopback, n = 2, the MLP): async_ps's compute took
// 19.7–21.1 ms of wall time a step and 6.4–6.7 ms of CPU.
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
// bytes all the processes send a step (ring, fusion, hierarchical, zero2
// 2(n−1)M; ring_fp16 (n−1)M; zero1, zero3 3(n−1)M; sps, dps, async_ps
// 2nM) and c_w
// the CPU a byte moved over the link costs in all (the link probe's,
// CostInputs::wire_cpu_byte_s). No step is shorter than the demand over
// the C cores (the cores' bound, Prediction::core_bound_s; async_ps with
// τ_s ≥ 1 has its own, below): the terms above price a step as if each
// process had cores of its own, the bound as if the cores ran their work
// perfectly packed. Contending processes run well short of that:
// measured at 8 Gbit/s (mobilenet_v2, 2 × 24 ms of emulated compute,
// n = 3, K = 3, 2 cores) the bound was the step for dps, ring and fusion
// (90.0, 69.7 and 66.9 ms against 118.8, 87.4 and 90.1 measured: −20% to
// −26%). validate_predictions.py reports the rows whose demand keeps most
// of the cores busy (core_share >= 0.8) apart.
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
           ps_worker_byte_s > 0 || ps_server_byte_s > 0 || ps_round_s > 0;
  }
};

// One gradient of a step's backward: its bytes and when it becomes ready,
// in seconds from the step's compute start.
struct GradientReady {
  double bytes = 0;
  double ready_s = 0;
};

// The synthetic model's schedule (models/synthetic_model.h), for a model
// whose readiness was not measured: tensors `bytes` in backward's order,
// a forward of forward_fraction · compute_s, then each gradient ready at
// a time proportional to the bytes backward has produced by then.
std::vector<GradientReady> ProportionalReadySchedule(
    const std::vector<double>& bytes, double compute_s,
    double forward_fraction = 1.0 / 3.0);

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
  // not measured. Only async_ps's cores' bound uses it (the file comment).
  double link_cpu_byte_s = 0;
  // The busy CPU seconds per byte moved over the run's link in all (a
  // shaped link's probe, link_probe.h: cpu_byte_s, loopback's share
  // included), >= 0; 0: not measured. Only the cores' demand uses it.
  double wire_cpu_byte_s = 0;
  // M: bytes of gradients (= parameters) exchanged per step, > 0.
  double model_bytes = 0;
  // T: number of gradient tensors, >= 1.
  int64_t num_tensors = 1;
  // n: data-parallel workers, >= 1.
  int64_t workers = 1;
  // K: parameter servers of dps, >= 1 (sps always has one).
  int64_t servers = 1;
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
  // call by call (the file comment), the others overlap nothing.
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
  // r: hierarchical's ranks per host, >= 0; 0 = all n workers on one host.
  int64_t ranks_per_host = 0;
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
  // The CPU terms (calibration); all 0: none.
  CpuCosts cpu;
};


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
  // The cores' bound on its step (the file comment): async_ps's with
  // τ ≥ 1, the others' cpu_demand_s / C; 0 unmeasured or without a core
  // limit. Where it is the step, the cores, not the link, decided it.
  double core_bound_s = 0;
  // The CPU seconds a step asks of the machine's cores, every process's
  // (the file comment's cores' demand); 0 where cpu.cores is 0 (no limit:
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
  double step_s = 0;              // t_c + exposed
  double utilization = 0;         // t_c / step
  double speedup = 0;             // n · t_c / step
  double scaling_efficiency = 0;  // speedup / n
  // Memory per rank (see the file comment): what one worker holds, and one
  // parameter server (0 without servers).
  double worker_memory_bytes = 0;
  double server_memory_bytes = 0;
};

// How a strategy's update compares with one worker's on the whole batch:
// kExact, the same update to float rounding (what the equivalence oracle
// checks at 1e-5); kLossy, gradients rounded on the wire (ring_fp16's
// fp16); kStale, gradients applied up to τ_s steps late (async_ps with a
// staleness bound τ_s ≥ 1). Rankings by throughput keep the exact ones
// apart from the others, whose samples can buy less loss: only a time to
// a target loss puts them on one scale.
enum class Updates { kExact, kLossy, kStale };
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
struct MemoryPerRank {
  double worker_bytes = 0;
  double server_bytes = 0;
};
absl::StatusOr<MemoryPerRank> PredictMemory(absl::string_view strategy,
                                            double param_bytes,
                                            double optimizer_state_per_param,
                                            int64_t workers, int64_t servers);

// The strategies the model knows, in table order: baseline, sps, dps,
// ring, fusion, async_ps, hierarchical, ring_fp16, zero1, zero2, zero3.
std::vector<std::string> CostModelStrategies();

// Predicts one step of `strategy` under `in`. INVALID_ARGUMENT on bad
// inputs or an unknown strategy (listing the known ones).
absl::StatusOr<Prediction> PredictStep(absl::string_view strategy,
                                       const CostInputs& in);

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

// {"inputs": {...}, "predictions": [{strategy, workers, servers, compute_s,
// bandwidth_s, latency_s, overhead_s, cpu_s, streamed_cpu_s, wire_s,
// comm_s, exposed_comm_s, step_s,
// utilization, speedup, scaling_efficiency, worker_memory_bytes,
// server_memory_bytes}, ...]}.
nlohmann::json PredictionsJson(const CostInputs& in,
                               const std::vector<Prediction>& predictions);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_COST_MODEL_H_
