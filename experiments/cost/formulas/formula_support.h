// The helpers several strategies' formulas share (formula_registry.h): the
// ring all-reduce's terms and DDP's buckets, the zero stages' sharded
// bandwidth, the parameter servers' duplex factor, pipeline and CPU, and
// one communication thread's calls in backward. Symbols as in
// experiments/cost/cost_model.h. Pure functions.
#ifndef RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_SUPPORT_H_
#define RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cost/cost_types.h"
#include "experiments/cost/formulas/formula_registry.h"

namespace ringside {

// 2(n−1)/n · M/B: the bytes a ring all-reduce moves over each link.
// The number an option of the strategy holds in in.strategy_options
// (`flag` without "--"), or `fallback` when it is absent or not a number.
double OptionNumber(const CostInputs& in, const std::string& flag,
                    double fallback);

double RingBandwidthSeconds(const CostInputs& in);

// 2(n−1)α: the latency of one ring all-reduce (reduce-scatter + all-gather,
// n−1 steps each).
double RingLatencySeconds(const CostInputs& in);

// B_i and α_i, the intra-host link of hierarchical and byteps:
// CostInputs::intra_bandwidth_Bps and intra_latency_s where given, else B
// and α.
double IntraBandwidthBps(const CostInputs& in);
double IntraLatencySeconds(const CostInputs& in);

// ring's all-reduces per step: DDP's buckets, a first one of first_bucket
// bytes then bucket bytes each, b_r = min(T, 1 + ⌈max(0, M − first)/bucket⌉);
// T (one per tensor) when bucket_bytes is 0.
int64_t RingAllReduces(const CostInputs& in);

// The text an option holds in in.strategy_options, or `fallback`.
std::string OptionText(const CostInputs& in, const std::string& flag,
                       const std::string& fallback);

// The zero stages' bandwidth term: the run's ring_critical_bytes over B
// when reported, else BalancedShardedSeconds.
double ShardedBandwidthSeconds(const CostInputs& in, double phases);
// `phases` balanced ring phases: phases·(n−1)/n · M/B.
double BalancedShardedSeconds(const CostInputs& in, double phases);
// zero2's and zero3's --zero_layout is per_unit (the default): every rank
// sends (n−1)/n of every unit, so the balanced figure is the critical one.
bool ZeroPerUnitLayout(const CostInputs& in);

// d of the parameter-server terms: 1 when push and pull share the link's
// seconds, else 2.
double DuplexFactor(const CostInputs& in);

// The parameter servers' push/pull pipeline: filled and drained once per
// step with d = 1, 2·n·C/B for chunks of C bytes (at most a server's range
// M/K); none when push and pull follow one another (d = 2).
double PsPipelineSeconds(const CostInputs& in, int64_t servers);

// The parameter server's CPU terms w, s and ρ of the run's transport: the
// bulk path's (CpuCosts' ps_tcp_*) when the strategy ran with
// --ps_transport=tcp and they were measured, else gRPC's (ps_*).
struct PsCpu {
  double worker_byte_s = 0, server_byte_s = 0, round_s = 0;
  bool bulk_path = false;
};
PsCpu PsCpuTerms(const CostInputs& in);

// dps's terms, which async_ps shares: d · max(W_g·M/B, n·M/(K·B)) + 2α +
// 2·n·C/B (W_g: the workers sharing a link, CostInputs::workers_per_link)
// and the CPU terms against K servers (dps_formula.cc).
void ShardedPsTerms(const CostInputs& in, Prediction& p);

// The parameter servers' CPU in the cores' demand: each worker's push+pull
// and round, M · w + ρ, and the servers' summing of n gradients, n·M·s,
// from one server's per-byte costs.
double PsCpuDemandSeconds(const CostInputs& in);

// A worker holding `copies` whole buffers (parameters, gradients, an
// error-feedback memory, ...) and its optimizer state, s per parameter,
// with no servers: (copies + s)·P.
MemoryPerRank WorkerCopiesMemory(double copies, double P, double s);

// The parameter servers' memory: a worker 2P, each of k servers
// (2 + s)·P/k.
MemoryPerRank PsMemory(double P, double s, double k);

// A call of a strategy that communicates in backward, as the simulation
// of overlap with backward runs it (cost_model.h).
struct BackwardCall {
  double ready_s = 0;  // its last gradient's ready time
  double bytes = 0;
};

// The parameter servers' pushes streaming in backward as `calls` become
// ready (dps: each tensor; byteps: each bucket once reduced within the
// host): (O − latency − after_s)/d of `budget` in backward, spread over the
// calls' bytes, the rest after backward (the pulls with d = 2, and
// `after_s`, what never overlaps: byteps's broadcast within the host), the
// pipeline's fill and drain fixed; into `run`.
void RunStreamedPushes(const CostInputs& in, const Prediction& p,
                       const BackwardBudget& budget,
                       const std::vector<BackwardCall>& calls, double after_s,
                       BackwardRun& run);

// DDP's bucket rule (gradient_buckets.h), tensors taken in backward's
// order: the open bucket, holding `open_bytes`, closes once it holds at
// least its cap, first_bucket_bytes for the `first` bucket and
// bucket_bytes after it; every tensor alone with bucket_bytes 0.
bool BucketCloses(const CostInputs& in, bool first, double open_bytes);

// Buckets in backward's order (BucketCloses).
std::vector<BackwardCall> BucketCalls(const CostInputs& in);

// One communication thread running `calls` in order, each taking
// per_call_s + per_byte_s · bytes from max(its ready time, the previous
// call's end): the last call's end, and the seconds they took in all.
struct SerialRun {
  double end_s = 0;
  double busy_s = 0;
};
SerialRun RunSerially(const std::vector<BackwardCall>& calls,
                      double per_call_s, double per_byte_s);

// The CPU of one ring step that a streamed call carries where the compute
// leaves the cores: c_s beside emulated compute (it sleeps), else 0 (the
// CPU terms are in u).
double StreamedStepSeconds(const CostInputs& in);

// DDP's buckets (BucketCalls) carrying `in_backward` seconds: b_r calls of
// latency_s / b_r and steps_per_call ring steps (StreamedStepSeconds) each,
// the rest spread over their bytes (of total_bytes); for ring, ring_fp16,
// hierarchical and zero2's reduce-scatter.
SerialRun RunBuckets(const CostInputs& in, double in_backward,
                     double total_bytes, double latency_s,
                     double steps_per_call);

// DDP's buckets carrying all of `budget` as all-reduces of
// `steps_per_call` ring steps each (RunBuckets with p's latency), into
// `run`: ring, ring_fp16 and hierarchical.
void RunBucketAllReduces(const CostInputs& in, const Prediction& p,
                         const BackwardBudget& budget, double steps_per_call,
                         BackwardRun& run);

// The formulas of ring's compression hooks that all-gather what each rank
// sends (ring_topk, ring_sign), per DDP bucket (b_r of them), G bytes a
// rank a step (GatheredBytes):
//   comm      n = 1: the compression only; else (n−1) · G/B + b_r · (n−1)α
//             (ring all-gathers)
//   CPU       the compression (CompressionSeconds) at every n (the hooks
//             compress at n = 1 too); n > 1 besides: (n−1) · G · g_b +
//             b_r · (n−1) · c_s + l_w
//   memory    worker (3 + s)·P (an error-feedback memory besides)
//   W         n(n−1) · G; backward: ring's buckets, all of O; lossy.
class GatheredBucketsFormula : public StrategyFormula {
 public:
  void Terms(const CostInputs& in, Prediction& p) const final;
  double BytesSentPerStep(const CostInputs& in) const final;
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const final;
  Updates UpdatesAt(int64_t staleness) const final { return Updates::kLossy; }
  std::string MemoryFormula() const final { return "(3 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const final;

 protected:
  // G: the bytes one rank contributes to a step's all-gathers.
  virtual double GatheredBytes(const CostInputs& in) const = 0;
  // The compression's CPU seconds a step on one rank (calibrated).
  virtual double CompressionSeconds(const CostInputs& in) const = 0;
};

// The formulas of the hooks that all-gather sign bits and a scale per
// tensor part (ring_sign, ring_onebit_adam), G ≈ M/32 + 4T bytes a rank a
// step: the compression (M/4) · (p_s + n · p_a), the packing and the n
// ranks' signs added (calibrated), and their first
// --compression_start_step steps plain all-reduces of ring's buckets,
// priced by ring's formula (plain_first_steps).
class SignedBucketsFormula : public GatheredBucketsFormula {
 public:
  std::vector<std::string> options() const final;
  std::optional<PlainFirstSteps> plain_first_steps() const final;

 protected:
  double GatheredBytes(const CostInputs& in) const final;
  double CompressionSeconds(const CostInputs& in) const final;
};

// The formulas of the strategies whose every worker holds the whole
// parameters, gradients and optimizer state (baseline, ring, ring_fp16,
// fusion, hierarchical): their memory, worker (2 + s)·P.
class ReplicatedFormula : public StrategyFormula {
 public:
  std::string MemoryFormula() const final { return "(2 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const final {
    return WorkerCopiesMemory(2, P, s);
  }
};

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_FORMULAS_FORMULA_SUPPORT_H_
