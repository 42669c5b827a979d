// ring_fp16: one all-reduce of fp16 halves per bucket (ring's buckets and
// b_r, ring_formula.cc), M/2 on the wire.
//   comm      n = 1: 0; else 2(n−1)/n · (M/2)/B + b_r · 2(n−1)α
//   CPU       n > 1: 2(n−1)/n · (M/2) · a_h + b_r · 2(n−1) · c_s + l_h (its
//             wake-up, measured on its own fp16 all-reduce, rather than
//             l_w; l_w where l_h was not measured); n = 1: M · v_h, its
//             conversions alone (they run at every n; at n = 1 on the
//             2-core VM its step took 0.7–0.8 ms more than its compute for
//             the MLP's 4.5 MB)
//   memory    worker (2 + s)·P: parameters, gradients, optimizer state
//   W         (n−1)M bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy: the gradients are rounded to fp16 on the wire
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingFp16Formula : public ReplicatedFormula {
 public:
  std::string name() const override { return "ring_fp16"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    if (in.workers <= 1) {
      p.cpu_s = M * c.half_convert_byte_s;  // the conversions alone
      return;
    }
    const double n = static_cast<double>(in.workers);
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    const double all_reduce = 2 * (n - 1);  // ring steps, c_s each
    const double buckets = static_cast<double>(RingAllReduces(in));
    // One fp16 all-reduce per bucket (ring's), half the bytes on the wire.
    p.bandwidth_s = RingBandwidthSeconds(in) / 2;
    p.latency_s = buckets * RingLatencySeconds(in);
    const double half_wake = c.half_collective_wake_s > 0
                                 ? c.half_collective_wake_s
                                 : c.collective_wake_s;
    p.streamed_cpu_s = 2 * share * (M / 2) * c.half_allreduce_byte_s +
                       buckets * all_reduce * c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + half_wake;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return (n - 1) * in.model_bytes;
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;  // nothing to communicate
    const double n = static_cast<double>(in.workers);
    RunBucketAllReduces(in, p, budget, 2 * (n - 1), run);
    return true;
  }
  Updates UpdatesAt(int64_t staleness) const override {
    return Updates::kLossy;
  }
  std::string LossyNote() const override { return "fp16 gradients"; }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingFp16Formula, 7);

}  // namespace ringside
