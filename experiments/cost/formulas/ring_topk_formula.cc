// ring_topk: per bucket (ring's buckets, b_r of them), one all-gather of
// every rank's k (index, value) pairs, k = max(1, ⌈ρ·size⌉) per tensor
// (ρ = --topk_ratio, the strategy's default 0.01 where the run names
// none): K ≈ max(ρ·M/4, T) pairs of 8 bytes a rank per step.
//   comm      n = 1: 0; else (n−1) · 8K/B + b_r · (n−1)α (a ring
//             all-gather: n−1 steps, each rank's pairs forwarded in turn)
//   CPU       n > 1: (n−1) · 8K · g_b + b_r · (n−1) · c_s + l_w; the
//             selection (nth_element over every element, about M/4 a step)
//             and the sparse sum are not calibrated and not priced
//   memory    worker (3 + s)·P: parameters, gradients, optimizer state and
//             the error-feedback memory
//   W         n(n−1) · 8K bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy: the elements not sent wait in the error memory
#include <algorithm>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingTopkFormula : public StrategyFormula {
 public:
  std::string name() const override { return "ring_topk"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb", "topk_ratio"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const CpuCosts& c = in.cpu;
    const double gathered = (n - 1) * PairBytes(in);
    const double buckets = static_cast<double>(RingAllReduces(in));
    p.bandwidth_s = gathered / in.bandwidth_Bps;
    p.latency_s = buckets * (n - 1) * in.latency_s;
    p.streamed_cpu_s =
        gathered * c.allgather_byte_s + buckets * (n - 1) * c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    const double n = static_cast<double>(in.workers);
    return n * (n - 1) * PairBytes(in);
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;
    RunBucketAllReduces(in, p, budget, static_cast<double>(in.workers - 1),
                        run);
    return true;
  }
  Updates UpdatesAt(int64_t staleness) const override {
    return Updates::kLossy;
  }
  std::string LossyNote() const override { return "top-k sparsified"; }
  std::string MemoryFormula() const override { return "(3 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = (3 + s) * P;
    return m;
  }

 private:
  // 8K: the bytes of one rank's pairs a step.
  static double PairBytes(const CostInputs& in) {
    const double ratio = std::clamp(OptionNumber(in, "topk_ratio", 0.01),
                                    0.0, 1.0);
    const double pairs = std::max(ratio * in.model_bytes / 4,
                                  static_cast<double>(in.num_tensors));
    return 8 * std::min(pairs, in.model_bytes / 4);
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingTopkFormula, 15);

}  // namespace ringside
