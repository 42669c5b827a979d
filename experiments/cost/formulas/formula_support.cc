#include "experiments/cost/formulas/formula_support.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "core/ps_chunks.h"

namespace ringside {

double OptionNumber(const CostInputs& in, const std::string& flag,
                    double fallback) {
  auto it = in.strategy_options.find(flag);
  double value = 0;
  if (it == in.strategy_options.end() ||
      !absl::SimpleAtod(it->second, &value)) {
    return fallback;
  }
  return value;
}

double RingBandwidthSeconds(const CostInputs& in) {
  const double n = static_cast<double>(in.workers);
  return 2.0 * (n - 1.0) / n * in.model_bytes / in.bandwidth_Bps;
}

double RingLatencySeconds(const CostInputs& in) {
  return 2.0 * static_cast<double>(in.workers - 1) * in.latency_s;
}

double IntraBandwidthBps(const CostInputs& in) {
  return in.intra_bandwidth_Bps > 0 ? in.intra_bandwidth_Bps
                                    : in.bandwidth_Bps;
}

double IntraLatencySeconds(const CostInputs& in) {
  return in.intra_latency_s >= 0 ? in.intra_latency_s : in.latency_s;
}

int64_t RingAllReduces(const CostInputs& in) {
  if (in.bucket_bytes <= 0) return in.num_tensors;
  const double rest = std::max(0.0, in.model_bytes - in.first_bucket_bytes);
  const double buckets = 1.0 + std::ceil(rest / in.bucket_bytes);
  return std::min<int64_t>(in.num_tensors, static_cast<int64_t>(buckets));
}

std::string OptionText(const CostInputs& in, const std::string& flag,
                       const std::string& fallback) {
  auto it = in.strategy_options.find(flag);
  return it == in.strategy_options.end() ? fallback : it->second;
}

bool ZeroPerUnitLayout(const CostInputs& in) {
  return OptionText(in, "zero_layout", "per_unit") == "per_unit";
}

double ShardedBandwidthSeconds(const CostInputs& in, double phases) {
  if (in.ring_critical_bytes > 0) {
    return in.ring_critical_bytes / in.bandwidth_Bps;
  }
  return BalancedShardedSeconds(in, phases);
}

double BalancedShardedSeconds(const CostInputs& in, double phases) {
  const double n = static_cast<double>(in.workers);
  return phases * (n - 1.0) / n * in.model_bytes / in.bandwidth_Bps;
}

double DuplexFactor(const CostInputs& in) {
  return in.ps_push_pull_overlap ? 1.0 : 2.0;
}

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

PsCpu PsCpuTerms(const CostInputs& in) {
  const CpuCosts& c = in.cpu;
  if (OptionText(in, "ps_transport", "grpc") == "tcp" && c.ps_tcp_round_s > 0) {
    return {c.ps_tcp_worker_byte_s, c.ps_tcp_server_byte_s, c.ps_tcp_round_s,
            /*bulk_path=*/true};
  }
  return {c.ps_worker_byte_s, c.ps_server_byte_s, c.ps_round_s, false};
}

void ShardedPsTerms(const CostInputs& in, Prediction& p) {
  const double n = static_cast<double>(in.workers);
  const double M = in.model_bytes;
  const double B = in.bandwidth_Bps;
  const CpuCosts& c = in.cpu;
  p.servers = in.servers;
  const double k = static_cast<double>(in.servers);
  // A host's workers push and pull through one link (workers_per_link).
  const double g = static_cast<double>(in.workers_per_link);
  p.bandwidth_s = DuplexFactor(in) * std::max(g * M / B, n * M / (k * B));
  p.latency_s = 2.0 * in.latency_s;
  p.overhead_s = PsPipelineSeconds(in, in.servers);
  const PsCpu ps = PsCpuTerms(in);
  if (!ps.bulk_path && c.ps_sharded_servers > 0 &&
      c.ps_sharded_servers == in.servers) {
    // Measured against these K servers on this machine's cores (over gRPC).
    p.streamed_cpu_s =
        M * c.ps_sharded_worker_byte_s + n * M * c.ps_sharded_server_byte_s;
    p.cpu_s = p.streamed_cpu_s + c.ps_sharded_round_s;
  } else {
    // From one server's costs: the servers' CPU work runs on at most C
    // cores at once.
    const double parallel = c.cores > 0 ? std::min<double>(k, c.cores) : k;
    p.streamed_cpu_s =
        M * ps.worker_byte_s + n * M * ps.server_byte_s / parallel;
    p.cpu_s = p.streamed_cpu_s + ps.round_s;
  }
}

void RunStreamedPushes(const CostInputs& in, const Prediction& p,
                       const BackwardBudget& budget,
                       const std::vector<BackwardCall>& calls, double after_s,
                       BackwardRun& run) {
  const double streamed = budget.overlappable_s - p.latency_s - after_s;
  const double in_backward = std::max(0.0, streamed) / DuplexFactor(in);
  const SerialRun r =
      RunSerially(calls, 0.0, in_backward / budget.total_bytes);
  run.end_s = r.end_s;
  run.busy_s = r.busy_s;
  run.after_s = budget.overlappable_s - in_backward;
  run.fixed_s = p.overhead_s;  // the pipeline's fill and drain
}

double PsCpuDemandSeconds(const CostInputs& in) {
  const double n = static_cast<double>(in.workers);
  const PsCpu ps = PsCpuTerms(in);
  return n * (in.model_bytes * ps.worker_byte_s + ps.round_s) +
         n * in.model_bytes * ps.server_byte_s;
}

MemoryPerRank PsMemory(double P, double s, double k) {
  MemoryPerRank m;
  m.worker_bytes = 2 * P;
  m.server_bytes = (2 + s) * P / k;
  return m;
}

bool BucketCloses(const CostInputs& in, bool first, double open_bytes) {
  return in.bucket_bytes <= 0 ||
         open_bytes >= (first ? in.first_bucket_bytes : in.bucket_bytes);
}

std::vector<BackwardCall> BucketCalls(const CostInputs& in) {
  std::vector<BackwardCall> calls;
  BackwardCall open;
  for (const GradientReady& g : in.gradient_ready) {
    open.bytes += g.bytes;
    open.ready_s = std::max(open.ready_s, g.ready_s);
    if (BucketCloses(in, calls.empty(), open.bytes)) {
      calls.push_back(open);
      open = BackwardCall{};
    }
  }
  if (open.bytes > 0) calls.push_back(open);
  return calls;
}

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

double StreamedStepSeconds(const CostInputs& in) {
  return in.compute_emulated ? in.cpu.collective_step_s : 0.0;
}

SerialRun RunBuckets(const CostInputs& in, double in_backward,
                     double total_bytes, double latency_s,
                     double steps_per_call) {
  const double formula_calls = static_cast<double>(RingAllReduces(in));
  const double per_call =
      latency_s / formula_calls + steps_per_call * StreamedStepSeconds(in);
  const double per_byte =
      std::max(0.0, in_backward - formula_calls * per_call) / total_bytes;
  return RunSerially(BucketCalls(in), per_call, per_byte);
}

void RunBucketAllReduces(const CostInputs& in, const Prediction& p,
                         const BackwardBudget& budget, double steps_per_call,
                         BackwardRun& run) {
  const SerialRun r = RunBuckets(in, budget.overlappable_s, budget.total_bytes,
                                 p.latency_s, steps_per_call);
  run.end_s = r.end_s;
  run.busy_s = r.busy_s;
}

void GatheredBucketsFormula::Terms(const CostInputs& in, Prediction& p) const {
  p.cpu_s = CompressionSeconds(in);
  if (in.workers <= 1) return;
  const double n = static_cast<double>(in.workers);
  const CpuCosts& c = in.cpu;
  const double gathered = (n - 1) * GatheredBytes(in);
  const double buckets = static_cast<double>(RingAllReduces(in));
  p.bandwidth_s = gathered / in.bandwidth_Bps;
  p.latency_s = buckets * (n - 1) * in.latency_s;
  p.streamed_cpu_s =
      gathered * c.allgather_byte_s + buckets * (n - 1) * c.collective_step_s;
  p.cpu_s += p.streamed_cpu_s + c.collective_wake_s;
}

double GatheredBucketsFormula::BytesSentPerStep(const CostInputs& in) const {
  const double n = static_cast<double>(in.workers);
  return n * (n - 1) * GatheredBytes(in);
}

bool GatheredBucketsFormula::SimulateBackward(const CostInputs& in,
                                              const Prediction& p,
                                              const BackwardBudget& budget,
                                              BackwardRun& run) const {
  if (in.workers <= 1) return false;  // nothing to communicate
  RunBucketAllReduces(in, p, budget, static_cast<double>(in.workers - 1), run);
  return true;
}

MemoryPerRank GatheredBucketsFormula::Memory(double P, double s, int64_t n,
                                             int64_t k) const {
  return WorkerCopiesMemory(3, P, s);
}

std::vector<std::string> SignedBucketsFormula::options() const {
  return {"ring_bucket_kb", "ring_first_bucket_kb", "compression_start_step"};
}

std::optional<StrategyFormula::PlainFirstSteps>
SignedBucketsFormula::plain_first_steps() const {
  return PlainFirstSteps{"compression_start_step", "ring", {}};
}

double SignedBucketsFormula::GatheredBytes(const CostInputs& in) const {
  return in.model_bytes / 32 + 4.0 * static_cast<double>(in.num_tensors);
}

double SignedBucketsFormula::CompressionSeconds(const CostInputs& in) const {
  const double n = static_cast<double>(in.workers);
  return in.model_bytes / 4 *
         (in.cpu.sign_pack_element_s + n * in.cpu.sign_add_element_s);
}

MemoryPerRank WorkerCopiesMemory(double copies, double P, double s) {
  MemoryPerRank m;
  m.worker_bytes = (copies + s) * P;
  return m;
}

}  // namespace ringside
