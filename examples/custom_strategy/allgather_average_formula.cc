// allgather_average's cost formula, registered from outside ringside's tree
// (RINGSIDE_REGISTER_FORMULA, experiments/cost/formulas/formula_registry.h)
// and linked into this package's predict and compare (ringside_predict,
// ringside_compare in experiments/ringside_tools.bzl). Symbols as in
// experiments/cost/cost_model.h.
//   comm      n = 1: 0; else (n−1)·M/B + (n−1)·α: a ring all-gather, each
//             rank's M to the n−1 others, after backward
//   CPU       n > 1: (n−1)·M·g_b + (n−1)·c_s + l_w
//   memory    worker (2 + s + n)·P: parameters, gradients, optimizer state
//             and the n gathered copies of the gradients
//   W         n·(n−1)·M bytes sent by all the ranks
//   backward  nothing starts before backward ends
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"

namespace ringside_example {
namespace {

using ringside::CostInputs;
using ringside::MemoryPerRank;
using ringside::Prediction;

class AllGatherAverageFormula : public ringside::StrategyFormula {
 public:
  std::string name() const override { return "allgather_average"; }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double others = static_cast<double>(in.workers - 1);
    p.bandwidth_s = others * in.model_bytes / in.bandwidth_Bps;
    p.latency_s = others * in.latency_s;
    p.streamed_cpu_s = others * in.model_bytes * in.cpu.allgather_byte_s +
                       others * in.cpu.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + in.cpu.collective_wake_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    const double n = static_cast<double>(in.workers);
    return n * (n - 1) * in.model_bytes;
  }
  std::string MemoryFormula() const override { return "(2 + s + n)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = (2 + s + static_cast<double>(n)) * P;
    return m;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(AllGatherAverageFormula, 50);

}  // namespace ringside_example
