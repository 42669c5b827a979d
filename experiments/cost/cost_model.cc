#include "experiments/cost/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/ps_chunks.h"

namespace ringside {
namespace {

absl::Status Bad(absl::string_view field, double value,
                 absl::string_view must) {
  return absl::InvalidArgumentError(
      absl::StrCat("cost model: ", field, " must be ", must, ", got ", value));
}

// 2(n−1)/n · M/B: the bytes a ring all-reduce moves over each link.
double RingBandwidthSeconds(const CostInputs& in) {
  const double n = static_cast<double>(in.workers);
  return 2.0 * (n - 1.0) / n * in.model_bytes / in.bandwidth_Bps;
}

// 2(n−1)α: the latency of one ring all-reduce (reduce-scatter + all-gather,
// n−1 steps each).
double RingLatencySeconds(const CostInputs& in) {
  return 2.0 * static_cast<double>(in.workers - 1) * in.latency_s;
}

// ring's all-reduces per step: DDP's buckets, a first one of first_bucket
// bytes then bucket bytes each, b_r = min(T, 1 + ⌈max(0, M − first)/bucket⌉);
// T (one per tensor) when bucket_bytes is 0.
int64_t RingAllReduces(const CostInputs& in) {
  if (in.bucket_bytes <= 0) return in.num_tensors;
  const double rest = std::max(0.0, in.model_bytes - in.first_bucket_bytes);
  const double buckets = 1.0 + std::ceil(rest / in.bucket_bytes);
  return std::min<int64_t>(in.num_tensors, static_cast<int64_t>(buckets));
}

// b = min(T, ⌈M/F⌉); T when fusion is off (F = 0).
int64_t FusedAllReduces(const CostInputs& in) {
  if (in.fusion_threshold_bytes <= 0) return in.num_tensors;
  const double batches = std::ceil(in.model_bytes / in.fusion_threshold_bytes);
  return std::min<int64_t>(in.num_tensors,
                           std::max<int64_t>(1, static_cast<int64_t>(batches)));
}

double DuplexFactor(const CostInputs& in) {
  return in.ps_push_pull_overlap ? 1.0 : 2.0;
}

// r of hierarchical: CostInputs::ranks_per_host, at most n; 0 means n.
int64_t RanksPerHost(const CostInputs& in) {
  if (in.ranks_per_host <= 0) return in.workers;
  return std::min(in.ranks_per_host, in.workers);
}

// The parameter servers' push/pull pipeline: filled and drained once per
// step with d = 1, 2·n·C/B for chunks of C bytes (at most a server's range
// M/K); none when push and pull follow one another (d = 2).
double PsPipelineSeconds(const CostInputs& in, int64_t servers) {
  if (!in.ps_push_pull_overlap) return 0;
  const double range = in.model_bytes / static_cast<double>(servers);
  const double chunk = in.ps_chunk_bytes > 0
                           ? in.ps_chunk_bytes
                           : static_cast<double>(AutoChunkBytes(
                                 static_cast<int64_t>(in.model_bytes),
                                 static_cast<int>(servers)));
  return 2.0 * static_cast<double>(in.workers) * std::min(chunk, range) /
         in.bandwidth_Bps;
}

// The zero stages' bandwidth term: the run's ring_critical_bytes over B
// when reported, else `phases` balanced ring phases, phases·(n−1)/n · M/B.
double ShardedBandwidthSeconds(const CostInputs& in, double phases) {
  if (in.ring_critical_bytes > 0) {
    return in.ring_critical_bytes / in.bandwidth_Bps;
  }
  const double n = static_cast<double>(in.workers);
  return phases * (n - 1.0) / n * in.model_bytes / in.bandwidth_Bps;
}

// Fills the communication terms of `p` for `strategy` -- the α-β terms
// and, from in.cpu, the calibrated CPU terms (cpu_s; the file comment's
// CPU terms, 0 uncalibrated); false if unknown.
// h of the file comment: the share of a background thread's CPU work that
// the cores beyond the n training threads run, shared among the n rounds'
// threads and the K servers.
double SpareCoreShare(const CostInputs& in) {
  if (in.cpu.cores == 0) return 1.0;
  const double spare = static_cast<double>(in.cpu.cores - in.workers);
  return std::clamp(spare / static_cast<double>(in.workers + in.servers), 0.0,
                    1.0);
}

// async_ps's cores' bound (the file comment): the n training threads'
// compute and their two M-byte copies, the n workers' rounds with their K
// servers' work and the link's CPU beyond loopback's, over the C cores; 0
// when there is no core limit (C = 0) or the rounds' CPU against this K is
// not known.
double AsyncCoreBoundSeconds(const CostInputs& in, double compute_s) {
  const CpuCosts& c = in.cpu;
  if (c.cores == 0 || c.ps_round_cpu_servers != in.servers ||
      c.ps_round_cpu_byte_s <= 0) {
    return 0;
  }
  const double n = static_cast<double>(in.workers);
  const double M = in.model_bytes;
  // Emulated compute sleeps, taking no core but for the gradients it
  // writes: its CPU time t_c' where measured, else none.
  const double compute_cpu =
      in.compute_emulated ? in.compute_cpu_s : compute_s;
  const double training = n * (compute_cpu + 2 * M * c.copy_byte_s);
  const double rounds =
      M * (c.ps_round_cpu_byte_s + (n - 1) * c.ps_round_cpu_worker_byte_s);
  // The link's own CPU beyond loopback's: n pushes and n pulls of M.
  const double link = 2 * n * M * in.link_cpu_byte_s;
  return (training + rounds + link) / static_cast<double>(c.cores);
}

bool CommTerms(absl::string_view strategy, const CostInputs& in,
               Prediction& p) {
  const double n = static_cast<double>(in.workers);
  const double M = in.model_bytes;
  const double B = in.bandwidth_Bps;
  const double T = static_cast<double>(in.num_tensors);
  const CpuCosts& c = in.cpu;
  const double share = (n - 1.0) / n;  // of M a rank sends per phase
  // Ring steps, as the α terms count messages: an all-reduce 2(n−1), a
  // reduce-scatter or all-gather n−1; c_s each.
  const double all_reduce = 2 * (n - 1), half = n - 1;
  const double step = c.collective_step_s;
  // l_w, once per step at n > 1: the step's collectives start behind its
  // compute (their later calls' stalls, right behind a transfer, are
  // within it: calibration.h).
  const double wake = c.collective_wake_s;
  // b_r, ring's buckets, which ring_fp16, hierarchical and zero2 share.
  const double buckets = static_cast<double>(RingAllReduces(in));
  if (strategy == "baseline") {
    p.workers = 1;
    return true;
  }
  if (strategy == "ring") {
    if (in.workers > 1) {
      p.bandwidth_s = RingBandwidthSeconds(in);
      p.latency_s = buckets * RingLatencySeconds(in);
      p.streamed_cpu_s =
          2 * share * M * c.allreduce_byte_s + buckets * all_reduce * step;
      p.cpu_s = p.streamed_cpu_s + wake;
    }
    return true;
  }
  if (strategy == "ring_fp16") {
    if (in.workers > 1) {
      // One fp16 all-reduce per bucket (ring's), half the bytes on the wire.
      p.bandwidth_s = RingBandwidthSeconds(in) / 2;
      p.latency_s = buckets * RingLatencySeconds(in);
      const double half_wake =
          c.half_collective_wake_s > 0 ? c.half_collective_wake_s : wake;
      p.streamed_cpu_s = 2 * share * (M / 2) * c.half_allreduce_byte_s +
                         buckets * all_reduce * step;
      p.cpu_s = p.streamed_cpu_s + half_wake;
    } else {
      p.cpu_s = M * c.half_convert_byte_s;  // the conversions alone
    }
    return true;
  }
  if (strategy == "fusion") {
    // The background thread cycles at every n: the step waits for a cycle.
    p.overhead_s = in.cycle_s;
    if (in.workers > 1) {
      p.bandwidth_s = RingBandwidthSeconds(in);
      // b data all-reduces plus the control all-reduce of the cycle.
      p.latency_s =
          static_cast<double>(FusedAllReduces(in) + 1) * RingLatencySeconds(in);
      p.streamed_cpu_s =
          2 * share * M * c.allreduce_byte_s +
          static_cast<double>(FusedAllReduces(in) + 1) * all_reduce * step;
      p.cpu_s = p.streamed_cpu_s + wake;
    }
    return true;
  }
  if (strategy == "sps") {
    p.servers = 1;
    p.bandwidth_s = DuplexFactor(in) * n * M / B;
    p.latency_s = 2.0 * in.latency_s;
    p.overhead_s = PsPipelineSeconds(in, 1);
    p.streamed_cpu_s = M * c.ps_worker_byte_s + n * M * c.ps_server_byte_s;
    p.cpu_s = p.streamed_cpu_s + c.ps_round_s;
    return true;
  }
  if (strategy == "dps" || strategy == "async_ps") {
    // async_ps moves what dps moves; with a staleness bound it moves it
    // behind the compute (PredictStep's overlap).
    p.servers = in.servers;
    const double k = static_cast<double>(in.servers);
    p.bandwidth_s = DuplexFactor(in) * std::max(M / B, n * M / (k * B));
    p.latency_s = 2.0 * in.latency_s;
    p.overhead_s = PsPipelineSeconds(in, in.servers);
    if (c.ps_sharded_servers > 0 && c.ps_sharded_servers == in.servers) {
      // Measured against these K servers on this machine's cores.
      p.streamed_cpu_s = M * c.ps_sharded_worker_byte_s +
                         n * M * c.ps_sharded_server_byte_s;
      p.cpu_s = p.streamed_cpu_s + c.ps_sharded_round_s;
    } else {
      // From one server's costs: the servers' CPU work runs on at most C
      // cores at once.
      const double parallel = c.cores > 0 ? std::min<double>(k, c.cores) : k;
      p.streamed_cpu_s =
          M * c.ps_worker_byte_s + n * M * c.ps_server_byte_s / parallel;
      p.cpu_s = p.streamed_cpu_s + c.ps_round_s;
    }
    return true;
  }
  if (strategy == "zero1" || strategy == "zero2") {
    if (in.workers > 1) {
      // An all-reduce (zero1) or a reduce-scatter (zero2), then an
      // all-gather: each of the n−1 steps of a reduce-scatter or an
      // all-gather moves M/n over each link and waits α.
      const bool zero1 = strategy == "zero1";
      const double phases = zero1 ? 3.0 : 2.0;
      p.bandwidth_s = ShardedBandwidthSeconds(in, phases);
      p.latency_s = phases * (n - 1.0) * in.latency_s;
      if (zero1) {  // one whole-buffer all-reduce
        p.streamed_cpu_s = 2 * share * M * c.allreduce_byte_s +
                           share * M * c.allgather_byte_s +
                           (all_reduce + half) * step;
      } else {  // a reduce-scatter per bucket, then the all-gather
        p.streamed_cpu_s =
            share * M * (c.reduce_scatter_byte_s + c.allgather_byte_s) +
            (buckets + 1) * half * step;
      }
      p.cpu_s = wake + p.streamed_cpu_s;
    }
    return true;
  }
  if (strategy == "hierarchical") {
    if (in.workers > 1) {
      const double r = static_cast<double>(RanksPerHost(in));
      const double h = std::ceil(n / r);  // hosts
      const double b_intra =
          in.intra_bandwidth_Bps > 0 ? in.intra_bandwidth_Bps : B;
      const double a_intra =
          in.intra_latency_s >= 0 ? in.intra_latency_s : in.latency_s;
      // Per bucket (ring's), Horovod's hierarchical all-reduce: a
      // reduce-scatter within the host, an all-reduce of each rank's 1/r
      // shard among its h peers across hosts (the r shards of a host share
      // its link: 2(h−1)/h · M through it), an all-gather within the host.
      p.bandwidth_s =
          2.0 * (r - 1.0) / r * M / b_intra + 2.0 * (h - 1.0) / h * M / B;
      p.latency_s = buckets * (2.0 * (r - 1.0) * a_intra +
                               2.0 * (h - 1.0) * in.latency_s);
      p.streamed_cpu_s =
          (r - 1) / r * M * (c.reduce_scatter_byte_s + c.allgather_byte_s) +
          2 * (h - 1) / h * (M / r) * c.allreduce_byte_s +
          buckets * (2 * (r - 1) + 2 * (h - 1)) * step;
      p.cpu_s = p.streamed_cpu_s + wake;
    }
    return true;
  }
  if (strategy == "zero3") {
    if (in.workers > 1) {
      p.bandwidth_s = ShardedBandwidthSeconds(in, 3.0);
      p.latency_s = T * 3.0 * (n - 1.0) * in.latency_s;
      // Both all-gathers land in pages given back after the tensor's use.
      p.streamed_cpu_s = share * M *
                             (2 * c.allgather_byte_s +
                              c.reduce_scatter_byte_s + 2 * c.refault_byte_s) +
                         3 * T * half * step;
      p.cpu_s = p.streamed_cpu_s + wake;
    }
    return true;
  }
  return false;
}

// The calls of a strategy that communicates in backward, as the
// simulation of overlap with backward runs them (the file comment).
struct BackwardCall {
  double ready_s = 0;  // its last gradient's ready time
  double bytes = 0;
};

// Buckets in backward's order (gradient_buckets.h's rule): the first
// closes at first_bucket_bytes, the others at bucket_bytes; one per tensor
// with bucket_bytes 0.
std::vector<BackwardCall> BucketCalls(const CostInputs& in) {
  std::vector<BackwardCall> calls;
  BackwardCall open;
  for (const GradientReady& g : in.gradient_ready) {
    open.bytes += g.bytes;
    open.ready_s = std::max(open.ready_s, g.ready_s);
    const double cap =
        calls.empty() ? in.first_bucket_bytes : in.bucket_bytes;
    if (in.bucket_bytes <= 0 || open.bytes >= cap) {
      calls.push_back(open);
      open = BackwardCall{};
    }
  }
  if (open.bytes > 0) calls.push_back(open);
  return calls;
}

// One communication thread running `calls` in order, each taking
// per_call_s + per_byte_s · bytes from max(its ready time, the previous
// call's end): the last call's end, and the seconds they took in all.
struct SerialRun {
  double end_s = 0;
  double busy_s = 0;
};
SerialRun RunSerially(const std::vector<BackwardCall>& calls,
                      double per_call_s, double per_byte_s) {
  SerialRun run;
  for (const BackwardCall& c : calls) {
    const double d = per_call_s + per_byte_s * c.bytes;
    run.end_s = std::max(run.end_s, c.ready_s) + d;
    run.busy_s += d;
  }
  return run;
}

// fusion's runtime over the schedule: idle until a gradient arrives, it
// runs a cycle one τ later, then every τ (or once the last cycle ended)
// while work is left; each cycle all-reduces every gradient ready by its
// start in calls of at most F bytes (one per tensor with F = 0) after one
// control all-reduce, each call per_call_s + per_byte_s · bytes.
SerialRun RunFusionCycles(const std::vector<GradientReady>& ready,
                          double cycle_s, double threshold_bytes,
                          double per_call_s, double per_byte_s) {
  SerialRun run;
  size_t next = 0;
  double tick = ready.empty() ? 0 : ready.front().ready_s + cycle_s;
  while (next < ready.size()) {
    const double start = std::max(tick, run.end_s);
    double bytes = 0, tensors = 0;
    while (next < ready.size() && ready[next].ready_s <= start) {
      bytes += ready[next++].bytes;
      ++tensors;
    }
    if (tensors == 0) {  // idle again: woken by the next gradient
      tick = ready[next].ready_s + cycle_s;
      continue;
    }
    const double calls =
        1 + (threshold_bytes > 0 ? std::ceil(bytes / threshold_bytes)
                                 : tensors);
    const double d = calls * per_call_s + per_byte_s * bytes;
    run.end_s = start + d;
    run.busy_s += d;
    tick = start + cycle_s;
  }
  return run;
}

// W of the cores' demand: the bytes all the processes send a step.
double BytesSentPerStep(absl::string_view strategy, const CostInputs& in) {
  const double n = static_cast<double>(in.workers), M = in.model_bytes;
  if (strategy == "sps" || strategy == "dps" || strategy == "async_ps") {
    return 2 * n * M;  // n pushes, n pulls
  }
  if (in.workers <= 1 || strategy == "baseline") return 0;
  if (strategy == "ring_fp16") return (n - 1) * M;
  if (strategy == "zero1" || strategy == "zero3") return 3 * (n - 1) * M;
  return 2 * (n - 1) * M;  // ring, fusion, hierarchical, zero2
}

// The cores' demand of the file comment: CPU seconds per step of every
// process together.
double CpuDemandSeconds(absl::string_view strategy, const CostInputs& in,
                        const Prediction& p) {
  const double n = static_cast<double>(in.workers);
  const double compute_cpu = in.compute_cpu_s > 0 ? in.compute_cpu_s
                             : in.compute_emulated ? 0.0
                                                   : in.compute_s;
  // The parameter servers' CPU terms are times on a worker's path (their
  // sharded ones against K servers at once): their CPU work is one
  // server's per-byte costs, each worker's push+pull and round, and the
  // servers' summing of n gradients, once.
  double rounds = n * p.cpu_s;
  if (strategy == "sps" || strategy == "dps" || strategy == "async_ps") {
    const CpuCosts& c = in.cpu;
    rounds = n * (in.model_bytes * c.ps_worker_byte_s + c.ps_round_s) +
             n * in.model_bytes * c.ps_server_byte_s;
  }
  return n * compute_cpu + rounds +
         BytesSentPerStep(strategy, in) * in.wire_cpu_byte_s;
}

// Fills p.exposed_comm_s and p.backward_hidden_s from in.gradient_ready
// for the strategies that communicate in backward (the file comment);
// false for the others, which overlap nothing.
bool SimulateBackwardOverlap(absl::string_view strategy, const CostInputs& in,
                             Prediction& p) {
  const bool ring_like = strategy == "ring" || strategy == "ring_fp16" ||
                         strategy == "hierarchical";
  const bool zero2 = strategy == "zero2";
  const bool fusion = strategy == "fusion";
  const bool dps = strategy == "dps";
  if (!ring_like && !zero2 && !fusion && !dps) return false;
  if (!fusion && in.workers <= 1) return false;  // nothing to communicate
  double total_bytes = 0, backward_end = 0;
  for (const GradientReady& g : in.gradient_ready) {
    total_bytes += g.bytes;
    backward_end = std::max(backward_end, g.ready_s);
  }
  if (!(total_bytes > 0)) return false;
  // u: what needs the compute's cores: beside emulated compute, which
  // sleeps, the wake-ups; beside real compute every CPU term, and on
  // loopback the link's seconds too (its bytes are the cores' copies).
  double u = in.compute_emulated ? p.cpu_s - p.streamed_cpu_s : p.cpu_s;
  if (!in.compute_emulated && !in.cpu_streams_with_link) u += p.wire_s;
  const double fixed = fusion ? 0.0 : p.overhead_s;  // fusion's τ: its cycles
  const double overlappable = std::max(0.0, p.comm_s - u - p.overhead_s);
  // The CPU of one ring step, which streamed calls carry where the
  // compute leaves the cores.
  const double n = static_cast<double>(in.workers);
  const double step = in.compute_emulated ? in.cpu.collective_step_s : 0.0;
  double in_backward = overlappable, after = 0;
  SerialRun run;
  if (ring_like || zero2) {
    const double formula_calls = static_cast<double>(RingAllReduces(in));
    double steps_per_call = 2 * (n - 1);
    if (strategy == "hierarchical") {
      const double r = static_cast<double>(RanksPerHost(in));
      steps_per_call = 2 * (r - 1) + 2 * (std::ceil(n / r) - 1);
    }
    double latency = p.latency_s;
    if (zero2) {  // the reduce-scatter's half; the all-gather after
      in_backward = overlappable / 2;
      after = overlappable - in_backward;
      latency /= 2;
      steps_per_call = n - 1;
    }
    const double per_call = latency / formula_calls + steps_per_call * step;
    const double per_byte =
        std::max(0.0, in_backward - formula_calls * per_call) / total_bytes;
    run = RunSerially(BucketCalls(in), per_call, per_byte);
  } else if (fusion) {
    // b data all-reduces and the control one (at n = 1 all cost 0).
    const double formula_calls = static_cast<double>(FusedAllReduces(in) + 1);
    const double per_call = p.latency_s / formula_calls + 2 * (n - 1) * step;
    const double per_byte =
        std::max(0.0, in_backward - formula_calls * per_call) / total_bytes;
    run = RunFusionCycles(in.gradient_ready, in.cycle_s,
                          in.fusion_threshold_bytes, per_call, per_byte);
  } else {  // dps: the pushes stream; with d = 2 the pulls follow them
    const double streamed = overlappable - p.latency_s;
    in_backward = streamed / DuplexFactor(in);
    after = overlappable - in_backward;
    std::vector<BackwardCall> tensors;
    for (const GradientReady& g : in.gradient_ready) {
      tensors.push_back({g.ready_s, g.bytes});
    }
    run = RunSerially(tensors, 0.0, std::max(0.0, in_backward) / total_bytes);
  }
  const double tail = std::max(0.0, run.end_s - backward_end);
  p.backward_hidden_s = std::max(0.0, run.busy_s - tail);
  p.exposed_comm_s = tail + after + fixed + u;
  return true;
}

}  // namespace

namespace {

// The per-byte and per-call fields of CpuCosts with their JSON keys; an
// optional one reads as 0 when absent (compare runs from before it was
// measured).
struct CpuCostField {
  const char* key;
  double CpuCosts::*field;
  bool optional;
};
std::vector<CpuCostField> CpuCostFields() {
  return {{"allreduce_byte_s", &CpuCosts::allreduce_byte_s, false},
          {"half_allreduce_byte_s", &CpuCosts::half_allreduce_byte_s, false},
          {"reduce_scatter_byte_s", &CpuCosts::reduce_scatter_byte_s, false},
          {"allgather_byte_s", &CpuCosts::allgather_byte_s, false},
          {"collective_step_s", &CpuCosts::collective_step_s, false},
          {"collective_wake_s", &CpuCosts::collective_wake_s, true},
          {"half_collective_wake_s", &CpuCosts::half_collective_wake_s, true},
          {"half_convert_byte_s", &CpuCosts::half_convert_byte_s, true},
          {"refault_byte_s", &CpuCosts::refault_byte_s, true},
          {"ps_worker_byte_s", &CpuCosts::ps_worker_byte_s, false},
          {"ps_server_byte_s", &CpuCosts::ps_server_byte_s, false},
          {"ps_round_s", &CpuCosts::ps_round_s, false},
          {"ps_sharded_worker_byte_s", &CpuCosts::ps_sharded_worker_byte_s,
           true},
          {"ps_sharded_server_byte_s", &CpuCosts::ps_sharded_server_byte_s,
           true},
          {"ps_sharded_round_s", &CpuCosts::ps_sharded_round_s, true},
          {"ps_round_cpu_byte_s", &CpuCosts::ps_round_cpu_byte_s, true},
          {"ps_round_cpu_worker_byte_s",
           &CpuCosts::ps_round_cpu_worker_byte_s, true},
          {"copy_byte_s", &CpuCosts::copy_byte_s, true}};
}

}  // namespace

nlohmann::json CpuCostsJson(const CpuCosts& c) {
  nlohmann::json j;
  for (const auto& [key, field, optional] : CpuCostFields()) {
    j[key] = c.*field;
  }
  j["cores"] = c.cores;
  j["ps_sharded_servers"] = c.ps_sharded_servers;
  j["ps_round_cpu_servers"] = c.ps_round_cpu_servers;
  return j;
}

absl::StatusOr<CpuCosts> CpuCostsFromJson(const nlohmann::json& j) {
  CpuCosts c;
  if (!j.is_object()) {
    return absl::InvalidArgumentError("calibration: not a JSON object");
  }
  for (const auto& [key, field, optional] : CpuCostFields()) {
    if (optional && !j.contains(key)) continue;
    if (!j.contains(key) || !j[key].is_number() ||
        !(j[key].get<double>() >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("calibration: '", key, "' must be a number >= 0, got ",
                       j.contains(key) ? j[key].dump() : "nothing"));
    }
    c.*field = j[key].get<double>();
  }
  if (!j.contains("cores") || !j["cores"].is_number_integer() ||
      j["cores"].get<int>() < 0) {
    return absl::InvalidArgumentError(
        "calibration: 'cores' must be an integer >= 0");
  }
  c.cores = j["cores"].get<int>();
  // Server counts older runs did not measure may be missing (0).
  for (const auto& [key, field] :
       {std::pair<const char*, int*>{"ps_sharded_servers",
                                     &c.ps_sharded_servers},
        {"ps_round_cpu_servers", &c.ps_round_cpu_servers}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number_integer() || j[key].get<int>() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "calibration: '", key, "' must be an integer >= 0"));
    }
    *field = j[key].get<int>();
  }
  return c;
}

absl::Status ValidateCostInputs(const CostInputs& in) {
  // Written as !(x > 0) so that NaN is rejected too.
  if (!(in.compute_s > 0) || std::isinf(in.compute_s)) {
    return Bad("compute_s (t_c)", in.compute_s, "> 0 and finite");
  }
  if (!(in.compute_cpu_s >= 0) || std::isinf(in.compute_cpu_s)) {
    return Bad("compute_cpu_s (t_c')", in.compute_cpu_s, ">= 0 and finite");
  }
  if (!(in.wire_cpu_byte_s >= 0) || std::isinf(in.wire_cpu_byte_s)) {
    return Bad("wire_cpu_byte_s (c_w)", in.wire_cpu_byte_s, ">= 0 and finite");
  }
  if (!(in.link_cpu_byte_s >= 0) || std::isinf(in.link_cpu_byte_s)) {
    return Bad("link_cpu_byte_s (y)", in.link_cpu_byte_s, ">= 0 and finite");
  }
  if (!(in.model_bytes > 0) || std::isinf(in.model_bytes)) {
    return Bad("model_bytes (M)", in.model_bytes, "> 0 and finite");
  }
  if (in.num_tensors < 1) {
    return Bad("num_tensors (T)", static_cast<double>(in.num_tensors), ">= 1");
  }
  if (in.workers < 1) {
    return Bad("workers (n)", static_cast<double>(in.workers), ">= 1");
  }
  if (in.servers < 1) {
    return Bad("servers (K)", static_cast<double>(in.servers), ">= 1");
  }
  if (!(in.bandwidth_Bps > 0) || std::isinf(in.bandwidth_Bps)) {
    return Bad("bandwidth (B)", in.bandwidth_Bps, "> 0 and finite");
  }
  if (!(in.latency_s >= 0) || std::isinf(in.latency_s)) {
    return Bad("latency (alpha)", in.latency_s, ">= 0 and finite");
  }
  if (!(in.fusion_threshold_bytes >= 0) ||
      std::isinf(in.fusion_threshold_bytes)) {
    return Bad("fusion_threshold_bytes (F)", in.fusion_threshold_bytes,
               ">= 0 and finite");
  }
  if (!(in.cycle_s >= 0) || std::isinf(in.cycle_s)) {
    return Bad("cycle_s (tau)", in.cycle_s, ">= 0 and finite");
  }
  if (!(in.bucket_bytes >= 0) || std::isinf(in.bucket_bytes) ||
      !(in.first_bucket_bytes >= 0) || std::isinf(in.first_bucket_bytes)) {
    return Bad("bucket_bytes / first_bucket_bytes",
               std::min(in.bucket_bytes, in.first_bucket_bytes),
               ">= 0 and finite");
  }
  if (!(in.ring_critical_bytes >= 0) || std::isinf(in.ring_critical_bytes)) {
    return Bad("ring_critical_bytes", in.ring_critical_bytes,
               ">= 0 and finite (0: the balanced formula)");
  }
  if (!(in.ps_chunk_bytes >= 0) || std::isinf(in.ps_chunk_bytes)) {
    return Bad("ps_chunk_bytes (C)", in.ps_chunk_bytes,
               ">= 0 and finite (0: AutoChunkBytes)");
  }
  if (in.staleness < 0) {
    return Bad("staleness (tau_s)", static_cast<double>(in.staleness),
               ">= 0 (0: synchronous)");
  }
  if (in.ranks_per_host < 0) {
    return Bad("ranks_per_host (r)", static_cast<double>(in.ranks_per_host),
               ">= 0 (0: every worker on one host)");
  }
  if (!(in.intra_bandwidth_Bps >= 0) || std::isinf(in.intra_bandwidth_Bps)) {
    return Bad("intra_bandwidth (B_intra)", in.intra_bandwidth_Bps,
               ">= 0 and finite (0: B)");
  }
  if (std::isnan(in.intra_latency_s) || std::isinf(in.intra_latency_s)) {
    return Bad("intra_latency (alpha_intra)", in.intra_latency_s,
               "finite (< 0: alpha)");
  }
  if (!(in.overlap >= 0 && in.overlap <= 1)) {
    return Bad("overlap (o)", in.overlap, "in [0, 1]");
  }
  for (const auto& [key, field, optional] : CpuCostFields()) {
    const double value = in.cpu.*field;
    if (!(value >= 0) || std::isinf(value)) {
      return Bad(absl::StrCat("cpu.", key), value, ">= 0 and finite");
    }
  }
  for (size_t i = 0; i < in.gradient_ready.size(); ++i) {
    const GradientReady& g = in.gradient_ready[i];
    if (!(g.bytes >= 0) || std::isinf(g.bytes)) {
      return Bad(absl::StrCat("gradient_ready[", i, "].bytes"), g.bytes,
                 ">= 0 and finite");
    }
    if (!(g.ready_s >= 0) || std::isinf(g.ready_s)) {
      return Bad(absl::StrCat("gradient_ready[", i, "].ready_s"), g.ready_s,
                 ">= 0 and finite");
    }
    if (i > 0 && g.ready_s < in.gradient_ready[i - 1].ready_s) {
      return Bad(absl::StrCat("gradient_ready[", i, "].ready_s"), g.ready_s,
                 "no earlier than the one before (the gradients in the "
                 "order they become ready)");
    }
  }
  if (in.cpu.cores < 0) {
    return Bad("cpu.cores (C)", in.cpu.cores, ">= 0 (0: every server)");
  }
  if (!(in.optimizer_state_per_param >= 0) ||
      std::isinf(in.optimizer_state_per_param)) {
    return Bad("optimizer_state_per_param (s)", in.optimizer_state_per_param,
               ">= 0 and finite");
  }
  return absl::OkStatus();
}

Updates UpdatesOf(absl::string_view strategy, int64_t staleness) {
  if (strategy == "ring_fp16") return Updates::kLossy;
  if (strategy == "async_ps" && staleness > 0) return Updates::kStale;
  return Updates::kExact;
}

std::string UpdatesLabel(absl::string_view strategy, int64_t staleness) {
  switch (UpdatesOf(strategy, staleness)) {
    case Updates::kLossy:
      return "lossy (fp16 gradients)";
    case Updates::kStale:
      return absl::StrCat("stale (τ=", staleness, ")");
    case Updates::kExact:
      break;
  }
  return "exact";
}

std::string MemoryFormula(absl::string_view strategy) {
  if (strategy == "baseline" || strategy == "ring" || strategy == "fusion" ||
      strategy == "hierarchical" || strategy == "ring_fp16") {
    return "(2 + s)·P";
  }
  if (strategy == "sps") return "2P; server (2 + s)·P";
  if (strategy == "dps" || strategy == "async_ps") {
    return "2P; server (2 + s)·P/K";
  }
  if (strategy == "zero1") return "2P + s·P/n";
  if (strategy == "zero2") return "P + (1 + s)·P/n";
  if (strategy == "zero3") return "(2 + s)·P/n";
  return "";
}

absl::StatusOr<MemoryPerRank> PredictMemory(absl::string_view strategy,
                                            double param_bytes,
                                            double optimizer_state_per_param,
                                            int64_t workers, int64_t servers) {
  if (MemoryFormula(strategy).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model: no memory formula for '", strategy,
                     "'; known: ", absl::StrJoin(CostModelStrategies(), ", ")));
  }
  if (!(param_bytes > 0) || std::isinf(param_bytes)) {
    return Bad("param bytes (P)", param_bytes, "> 0 and finite");
  }
  if (!(optimizer_state_per_param >= 0) ||
      std::isinf(optimizer_state_per_param)) {
    return Bad("optimizer_state_per_param (s)", optimizer_state_per_param,
               ">= 0 and finite");
  }
  if (workers < 1) return Bad("workers (n)", workers, ">= 1");
  if (servers < 1) return Bad("servers (K)", servers, ">= 1");
  const double P = param_bytes, s = optimizer_state_per_param;
  const double n = static_cast<double>(workers);
  MemoryPerRank m;
  if (strategy == "sps" || strategy == "dps" || strategy == "async_ps") {
    const double k = strategy == "sps" ? 1.0 : static_cast<double>(servers);
    m.worker_bytes = 2 * P;
    m.server_bytes = (2 + s) * P / k;
  } else if (strategy == "zero1") {
    m.worker_bytes = 2 * P + s * P / n;
  } else if (strategy == "zero2") {
    m.worker_bytes = P + (1 + s) * P / n;
  } else if (strategy == "zero3") {
    m.worker_bytes = (2 + s) * P / n;
  } else {
    m.worker_bytes = (2 + s) * P;
  }
  return m;
}

std::vector<GradientReady> ProportionalReadySchedule(
    const std::vector<double>& bytes, double compute_s,
    double forward_fraction) {
  double total = 0;
  for (double b : bytes) total += b;
  std::vector<GradientReady> out;
  const double forward = forward_fraction * compute_s;
  double produced = 0;
  for (double b : bytes) {
    produced += b;
    out.push_back({b, forward + (compute_s - forward) *
                                    (total > 0 ? produced / total : 1.0)});
  }
  return out;
}

std::vector<std::string> CostModelStrategies() {
  return {"baseline",     "sps",       "dps",   "ring",  "fusion", "async_ps",
          "hierarchical", "ring_fp16", "zero1", "zero2", "zero3"};
}

absl::StatusOr<Prediction> PredictStep(absl::string_view strategy,
                                       const CostInputs& in) {
  if (absl::Status s = ValidateCostInputs(in); !s.ok()) return s;
  Prediction p;
  p.strategy = std::string(strategy);
  p.workers = in.workers;
  p.compute_s = in.compute_s;
  if (!CommTerms(strategy, in, p)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model: unknown strategy '", strategy,
                     "'; known: ", absl::StrJoin(CostModelStrategies(), ", ")));
  }
  absl::StatusOr<MemoryPerRank> memory =
      PredictMemory(strategy, in.model_bytes, in.optimizer_state_per_param,
                    p.workers, in.servers);
  if (!memory.ok()) return memory.status();
  p.worker_memory_bytes = memory->worker_bytes;
  p.server_memory_bytes = memory->server_bytes;
  // On a wire of its own the per-byte CPU work runs while the bytes are in
  // flight, chunk by chunk: the link's seconds beyond it are what it adds.
  p.wire_s = in.cpu_streams_with_link
                 ? std::max(0.0, p.bandwidth_s - p.streamed_cpu_s)
                 : p.bandwidth_s;
  p.comm_s = p.wire_s + p.latency_s + p.overhead_s + p.cpu_s;
  // async_ps with a staleness bound communicates in the background.
  const bool background = strategy == "async_ps" && in.staleness > 0;
  const double overlap = background ? 1.0 : in.overlap;
  // The CPU terms share the cores with the compute, so they are not
  // hidden, except a background thread's on cores the compute leaves.
  p.hidden_cpu_s = background ? SpareCoreShare(in) * p.cpu_s : 0.0;
  const double unhidden = p.cpu_s - p.hidden_cpu_s;
  // A background round's CPU work that took the compute's cores is in the
  // compute's wall time and in u: the step counts the compute's own CPU
  // time where it was measured.
  // Emulated compute sleeps through t_c whatever its CPU time.
  p.step_compute_s =
      background && in.compute_cpu_s > 0 && !in.compute_emulated
          ? std::min(in.compute_s, in.compute_cpu_s)
          : in.compute_s;
  if (background || in.gradient_ready.empty() ||
      !SimulateBackwardOverlap(strategy, in, p)) {
    // Without a schedule, o; with one, a strategy that communicates only
    // after backward hides nothing.
    const double o = background || in.gradient_ready.empty() ? overlap : 0.0;
    p.exposed_comm_s =
        std::max(0.0, p.comm_s - unhidden - o * p.step_compute_s) + unhidden;
  }
  // No step is shorter than the CPU work of all its processes over the
  // cores: on saturated cores a background round runs as fast as the
  // cores let it, not as fast as its quiet calibration.
  if (background) p.core_bound_s = AsyncCoreBoundSeconds(in, p.step_compute_s);
  p.exposed_comm_s = std::max(
      p.exposed_comm_s, p.core_bound_s - p.step_compute_s);
  p.step_s = p.step_compute_s + p.exposed_comm_s;
  // The cores' demand; every strategy but a background async_ps (which has
  // its own bound above) takes no less than it over the cores.
  if (in.cpu.cores > 0) {
    p.cpu_demand_s = CpuDemandSeconds(strategy, in, p);
    if (!background) {
      p.core_bound_s = p.cpu_demand_s / static_cast<double>(in.cpu.cores);
      if (p.core_bound_s > p.step_s) {
        p.exposed_comm_s += p.core_bound_s - p.step_s;
        p.step_s = p.core_bound_s;
      }
    }
    p.core_share = p.cpu_demand_s / (in.cpu.cores * p.step_s);
  }
  p.utilization = in.compute_s / p.step_s;
  p.speedup = static_cast<double>(p.workers) * in.compute_s / p.step_s;
  p.scaling_efficiency = p.speedup / static_cast<double>(p.workers);
  return p;
}

absl::StatusOr<std::vector<Prediction>> PredictSweep(
    const std::vector<std::string>& strategies, const CostInputs& in,
    int64_t max_workers) {
  if (max_workers < 1) {
    return Bad("max_workers", static_cast<double>(max_workers), ">= 1");
  }
  std::vector<int64_t> counts;
  for (int64_t n = 1; n < max_workers; n *= 2) counts.push_back(n);
  counts.push_back(max_workers);
  std::vector<Prediction> out;
  for (const std::string& strategy : strategies) {
    for (int64_t n : counts) {
      CostInputs at = in;
      at.workers = n;
      absl::StatusOr<Prediction> p = PredictStep(strategy, at);
      if (!p.ok()) return p.status();
      out.push_back(*std::move(p));
      if (strategy == "baseline") break;  // one worker only
    }
  }
  return out;
}

absl::StatusOr<double> PredictionError(double predicted, double measured) {
  if (!(measured > 0) || std::isinf(measured)) {
    return Bad("measured value", measured, "> 0 and finite");
  }
  if (!(predicted >= 0) || std::isinf(predicted)) {
    return Bad("predicted value", predicted, ">= 0 and finite");
  }
  return (predicted - measured) / measured;
}

std::string PredictionsMarkdown(const std::vector<Prediction>& predictions) {
  // Pivot: rows n (ascending, first-seen order), one column per strategy.
  std::vector<std::string> strategies;
  std::vector<int64_t> counts;
  for (const Prediction& p : predictions) {
    if (std::find(strategies.begin(), strategies.end(), p.strategy) ==
        strategies.end()) {
      strategies.push_back(p.strategy);
    }
    if (std::find(counts.begin(), counts.end(), p.workers) == counts.end()) {
      counts.push_back(p.workers);
    }
  }
  std::sort(counts.begin(), counts.end());
  auto find = [&](const std::string& s, int64_t n) -> const Prediction* {
    for (const Prediction& p : predictions) {
      if (p.strategy == s && p.workers == n) return &p;
    }
    return nullptr;
  };
  std::string md = "Speedup (scaling efficiency) by workers n:\n\n|     n |";
  for (const std::string& s : strategies)
    absl::StrAppendFormat(&md, " %16s |", s);
  md += "\n|------:|";
  for (size_t i = 0; i < strategies.size(); ++i) md += "-----------------:|";
  md += "\n";
  for (int64_t n : counts) {
    absl::StrAppendFormat(&md, "| %5d |", n);
    for (const std::string& s : strategies) {
      const Prediction* p = find(s, n);
      const std::string cell = p == nullptr
                                   ? ""
                                   : absl::StrFormat("%.2f (%.2f)", p->speedup,
                                                     p->scaling_efficiency);
      absl::StrAppendFormat(&md, " %16s |", cell);
    }
    md += "\n";
  }
  md +=
      "\n| Strategy |     n | Step (ms) | Comm (ms) | Exposed (ms) | "
      "Utilization |  Speedup | Scaling eff. | Mem/worker (MB) | "
      "Mem/server (MB) |\n"
      "|----------|------:|----------:|----------:|-------------:|"
      "------------:|---------:|-------------:|----------------:|"
      "----------------:|\n";
  for (const Prediction& p : predictions) {
    const std::string server =
        p.servers > 0 ? absl::StrFormat("%.1f", p.server_memory_bytes / 1e6)
                      : "-";
    absl::StrAppendFormat(
        &md,
        "| %-8s | %5d | %9.3f | %9.3f | %12.3f | %10.1f%% | %8.2f | %12.3f "
        "| %15.1f | %15s |\n",
        p.strategy, p.workers, 1e3 * p.step_s, 1e3 * p.comm_s,
        1e3 * p.exposed_comm_s, 100 * p.utilization, p.speedup,
        p.scaling_efficiency, p.worker_memory_bytes / 1e6, server);
  }
  md +=
      "\nMemory per rank: P = M the parameters' bytes, s the optimizer's "
      "state per parameter (ZeRO's accounting, no activations): ";
  std::vector<std::string> formulas;
  for (const std::string& s : strategies) {
    if (const std::string f = MemoryFormula(s); !f.empty()) {
      formulas.push_back(absl::StrCat(s, " ", f));
    }
  }
  absl::StrAppend(&md, absl::StrJoin(formulas, "; "), ".\n");
  return md;
}

nlohmann::json PredictionsJson(const CostInputs& in,
                               const std::vector<Prediction>& predictions) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Prediction& p : predictions) {
    rows.push_back({{"strategy", p.strategy},
                    {"workers", p.workers},
                    {"servers", p.servers},
                    {"compute_s", p.compute_s},
                    {"step_compute_s", p.step_compute_s},
                    {"bandwidth_s", p.bandwidth_s},
                    {"latency_s", p.latency_s},
                    {"overhead_s", p.overhead_s},
                    {"cpu_s", p.cpu_s},
                    {"streamed_cpu_s", p.streamed_cpu_s},
                    {"wire_s", p.wire_s},
                    {"comm_s", p.comm_s},
                    {"exposed_comm_s", p.exposed_comm_s},
                    {"core_bound_s", p.core_bound_s},
                    {"backward_hidden_s", p.backward_hidden_s},
                    {"cpu_demand_s", p.cpu_demand_s},
                    {"core_share", p.core_share},
                    {"step_s", p.step_s},
                    {"utilization", p.utilization},
                    {"speedup", p.speedup},
                    {"scaling_efficiency", p.scaling_efficiency},
                    {"worker_memory_bytes", p.worker_memory_bytes},
                    {"server_memory_bytes", p.server_memory_bytes}});
  }
  return {{"inputs",
           {{"compute_s", in.compute_s},
            {"model_bytes", in.model_bytes},
            {"num_tensors", in.num_tensors},
            {"servers", in.servers},
            {"bandwidth_Bps", in.bandwidth_Bps},
            {"latency_s", in.latency_s},
            {"fusion_threshold_bytes", in.fusion_threshold_bytes},
            {"cycle_s", in.cycle_s},
            {"overlap", in.overlap},
            {"ps_push_pull_overlap", in.ps_push_pull_overlap},
            {"cpu_streams_with_link", in.cpu_streams_with_link},
            {"compute_emulated", in.compute_emulated},
            {"bucket_bytes", in.bucket_bytes},
            {"first_bucket_bytes", in.first_bucket_bytes},
            {"ranks_per_host", in.ranks_per_host},
            {"intra_bandwidth_Bps", in.intra_bandwidth_Bps},
            {"intra_latency_s", in.intra_latency_s},
            {"optimizer_state_per_param", in.optimizer_state_per_param}}},
          {"predictions", rows}};
}

}  // namespace ringside
