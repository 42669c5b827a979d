// zero1: ZeRO stage 1. One all-reduce of the whole gradient buffer, then
// one all-gather of the updated parameters (each rank sends its shard
// (n−1) times, receives the others').
//   comm      n = 1: 0; else 3(n−1)/n · M/B + 3(n−1)α (with the run's
//             ring_critical_bytes R > 0 the bandwidth term is R/B,
//             cost_model.h)
//   CPU       n > 1: 2(n−1)/n · M · a_b + (n−1)/n · M · g_b + 3(n−1) · c_s
//             + l_w
//   memory    worker 2P + s·P/n: the optimizer state sharded
//   W         3(n−1)M bytes sent by all the ranks
//   backward  nothing starts in backward
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class Zero1Formula : public StrategyFormula {
 public:
  std::string name() const override { return "zero1"; }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    // Ring steps: an all-reduce 2(n−1), an all-gather n−1; c_s each.
    const double all_reduce = 2 * (n - 1), half = n - 1;
    // An all-reduce, then an all-gather: each of the n−1 steps of a
    // reduce-scatter or an all-gather moves M/n over each link and waits α.
    const double phases = 3.0;
    p.bandwidth_s = ShardedBandwidthSeconds(in, phases);
    p.latency_s = phases * (n - 1.0) * in.latency_s;
    // One whole-buffer all-reduce.
    p.streamed_cpu_s = 2 * share * M * c.allreduce_byte_s +
                       share * M * c.allgather_byte_s +
                       (all_reduce + half) * c.collective_step_s;
    p.cpu_s = c.collective_wake_s + p.streamed_cpu_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 3 * (n - 1) * in.model_bytes;
  }
  std::string MemoryFormula() const override { return "2P + s·P/n"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = 2 * P + s * P / static_cast<double>(n);
    return m;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(Zero1Formula, 8);

}  // namespace ringside
