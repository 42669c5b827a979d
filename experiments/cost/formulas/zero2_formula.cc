// zero2: ZeRO stage 2. A reduce-scatter of the gradients in DDP's buckets
// (ring's buckets and b_r, ring_formula.cc; the α term counts one), then
// one all-gather of the parameters (an all-reduce's bytes).
//   comm      n = 1: 0; else 2(n−1)/n · M/B + 2(n−1)α (each bucket cut
//             evenly across the ranks; with --zero_layout=contiguous and
//             the run's ring_critical_bytes R > 0 the bandwidth term is
//             R/B, cost_model.h)
//   CPU       n > 1: (n−1)/n · M · (r_b + g_b) + (b_r + 1)(n−1) · c_s + l_w
//   memory    worker P + (1 + s)·P/n: the gradients sharded too (plus the
//             gradients not yet reduce-scattered, which the formula leaves
//             out, as ZeRO's does)
//   W         2(n−1)M bytes sent by all the ranks
//   backward  ring's buckets carry its reduce-scatter, half of O (each
//             call n−1 ring steps, half the latency term); its all-gather,
//             the other half, follows the optimizer
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class Zero2Formula : public StrategyFormula {
 public:
  std::string name() const override { return "zero2"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb", "zero_layout"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    const double half = n - 1;  // ring steps of a reduce-scatter, c_s each
    const double buckets = static_cast<double>(RingAllReduces(in));
    // A reduce-scatter, then an all-gather: each of the n−1 steps of
    // either moves M/n over each link and waits α.
    const double phases = 2.0;
    p.bandwidth_s = ZeroPerUnitLayout(in) ? BalancedShardedSeconds(in, phases)
                                          : ShardedBandwidthSeconds(in, phases);
    p.latency_s = phases * (n - 1.0) * in.latency_s;
    // A reduce-scatter per bucket, then the all-gather.
    p.streamed_cpu_s =
        share * M * (c.reduce_scatter_byte_s + c.allgather_byte_s) +
        (buckets + 1) * half * c.collective_step_s;
    p.cpu_s = c.collective_wake_s + p.streamed_cpu_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 2 * (n - 1) * in.model_bytes;
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;  // nothing to communicate
    const double n = static_cast<double>(in.workers);
    // The reduce-scatter's half; the all-gather after.
    const double in_backward = budget.overlappable_s / 2;
    const SerialRun r = RunBuckets(in, in_backward, budget.total_bytes,
                                   p.latency_s / 2, n - 1);
    run.end_s = r.end_s;
    run.busy_s = r.busy_s;
    run.after_s = budget.overlappable_s - in_backward;
    return true;
  }
  std::string MemoryFormula() const override { return "P + (1 + s)·P/n"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = P + (1 + s) * P / static_cast<double>(n);
    return m;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(Zero2Formula, 9);

}  // namespace ringside
