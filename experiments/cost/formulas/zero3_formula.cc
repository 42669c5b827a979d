// zero3: ZeRO stage 3 / FSDP. Per unit (U of them: adjacent tensors up to
// --zero3_unit_kb = u, U = min(T, ⌈M/u⌉); T at u = 0) an all-gather before
// forward, another before backward and a reduce-scatter of its gradients
// (1.5× an all-reduce's bytes).
//   comm      n = 1: 0; else 3(n−1)/n · M/B + U · 3(n−1)α (each unit cut
//             evenly across the ranks; with --zero_layout=contiguous and
//             the run's ring_critical_bytes R > 0 the bandwidth term is
//             R/B, cost_model.h)
//   CPU       n > 1: (n−1)/n · M · (2 g_b + r_b + 2 f_b) + 3U(n−1) · c_s
//             + l_w (f_b: each all-gather writes the other ranks' (n−1)/n
//             of M into pages zero3 gave back after their last use, which
//             fault in again; the gradients' pages likewise, but those
//             faults fall in the backward, so in the measured compute t_c)
//   memory    worker (2 + s)·P/n: the parameters sharded too (plus the
//             tensors gathered at once, which the formula leaves out, as
//             ZeRO's does)
//   W         3(n−1)M bytes sent by all the ranks
//   backward  nothing priced as hidden; but its prefetched all-gathers
//             and backward's reduce-scatters run on a communication
//             thread during the compute (CommunicatesDuringCompute)
//   updates   exact
#include <algorithm>
#include <cmath>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

// U: the units zero3 gathers (its default unit: 4 MiB, ZeroOptions).
int64_t Zero3Units(const CostInputs& in) {
  const double unit = OptionNumber(in, "zero3_unit_kb", 4096) * 1024;
  if (unit <= 0) return in.num_tensors;
  return std::min<int64_t>(
      in.num_tensors,
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(in.model_bytes / unit))));
}

class Zero3Formula : public StrategyFormula {
 public:
  std::string name() const override { return "zero3"; }
  std::vector<std::string> options() const override {
    return {"zero_layout", "zero3_unit_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const double U = static_cast<double>(Zero3Units(in));
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    const double half = n - 1;  // ring steps of one call, c_s each
    p.bandwidth_s = ZeroPerUnitLayout(in) ? BalancedShardedSeconds(in, 3.0)
                                          : ShardedBandwidthSeconds(in, 3.0);
    p.latency_s = U * 3.0 * (n - 1.0) * in.latency_s;
    // Both all-gathers land in pages given back after the tensor's use.
    p.streamed_cpu_s = share * M *
                           (2 * c.allgather_byte_s + c.reduce_scatter_byte_s +
                            2 * c.refault_byte_s) +
                       3 * U * half * c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s;
  }
  bool CommunicatesDuringCompute(const CostInputs& in) const override {
    return in.workers > 1;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 3 * (n - 1) * in.model_bytes;
  }
  std::string MemoryFormula() const override { return "(2 + s)·P/n"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = (2 + s) * P / static_cast<double>(n);
    return m;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(Zero3Formula, 10);

}  // namespace ringside
