// dps: K parameter servers over byte-balanced key ranges. Each worker's
// link carries M each way (W_g·M where W_g workers share a host's link,
// CostInputs::workers_per_link), each server's link n·M/K each way; d and
// the chunk pipeline's fill and drain 2·n·C/B (C: --chunk_kb, else
// AutoChunkBytes, at most a server's range M/K) as cost_model.h explains.
//   comm      d · max(W_g·M/B, n·M/(K·B)) + 2α + 2·n·C/B
//   CPU       M · w_K + n · M · s_K + ρ_K when calibrated against its K
//             servers; else M · w + n · M · s / min(K, C) + ρ (C: cores,
//             else K)
//   memory    worker 2P (parameters, gradients); each server (2 + s)·P/K,
//             its key range's parameters, state and one accumulator
//   W         2nM bytes sent (n pushes, n pulls)
//   backward  the pushes stream as the gradients become ready (its workers
//             push a chunk once its tensors are ready): (O − latency)/d in
//             backward, the rest (the pulls with d = 2) after; the pulls
//             follow each chunk, which the fill and drain term covers
//   updates   exact
#include <algorithm>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class DpsFormula : public StrategyFormula {
 public:
  std::string name() const override { return "dps"; }
  std::vector<std::string> options() const override {
    return {"chunk_kb", "ps_transport"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    ShardedPsTerms(in, p);
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    return 2 * static_cast<double>(in.workers) * in.model_bytes;
  }
  double CommCpuDemandSeconds(const CostInputs& in,
                              const Prediction& p) const override {
    return PsCpuDemandSeconds(in);
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;  // nothing to communicate
    // The pushes stream; with d = 2 the pulls follow them.
    std::vector<BackwardCall> tensors;
    for (const GradientReady& g : in.gradient_ready) {
      tensors.push_back({g.ready_s, g.bytes});
    }
    RunStreamedPushes(in, p, budget, tensors, 0.0, run);
    return true;
  }
  std::string MemoryFormula() const override {
    return "2P; server (2 + s)·P/K";
  }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return PsMemory(P, s, static_cast<double>(k));
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(DpsFormula, 2);

}  // namespace ringside
