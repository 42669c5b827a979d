// ring_sign: per bucket (ring's buckets, b_r of them), one all-gather of
// every rank's sign bits and per-tensor scales: S ≈ M/32 + 4T bytes a rank
// per step.
//   comm      n = 1: 0; else (n−1) · S/B + b_r · (n−1)α (a ring all-gather)
//   CPU       n > 1: (n−1) · S · g_b + b_r · (n−1) · c_s + l_w; the
//             packing and the n ranks' unpacking (about n·M/4 elements a
//             step) are not calibrated and not priced
//   memory    worker (3 + s)·P: parameters, gradients, optimizer state and
//             the error-feedback memory
//   W         n(n−1) · S bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy: one bit per element and a scale per tensor
#include <algorithm>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingSignFormula : public StrategyFormula {
 public:
  std::string name() const override { return "ring_sign"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const CpuCosts& c = in.cpu;
    const double gathered = (n - 1) * SignBytes(in);
    const double buckets = static_cast<double>(RingAllReduces(in));
    p.bandwidth_s = gathered / in.bandwidth_Bps;
    p.latency_s = buckets * (n - 1) * in.latency_s;
    p.streamed_cpu_s =
        gathered * c.allgather_byte_s + buckets * (n - 1) * c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    const double n = static_cast<double>(in.workers);
    return n * (n - 1) * SignBytes(in);
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
  std::string LossyNote() const override { return "sign, 1 bit"; }
  std::string MemoryFormula() const override { return "(3 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m;
    m.worker_bytes = (3 + s) * P;
    return m;
  }

 private:
  // S: one rank's bits and scales a step.
  static double SignBytes(const CostInputs& in) {
    return in.model_bytes / 32 + 4.0 * static_cast<double>(in.num_tensors);
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingSignFormula, 16);

}  // namespace ringside
