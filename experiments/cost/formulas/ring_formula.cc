// ring: one all-reduce per bucket of gradients, as DDP buckets them (a
// first bucket of first_bucket_bytes, then bucket_bytes each;
// --ring_first_bucket_kb, --ring_bucket_kb): b_r = min(T, 1 + ⌈max(0,
// M − first)/bucket⌉) all-reduces (b_r = T, one per tensor, with
// bucket_bytes = 0).
//   comm      n = 1: 0; else 2(n−1)/n · M/B + b_r · 2(n−1)α
//   CPU       n > 1: 2(n−1)/n · M · a_b + b_r · 2(n−1) · c_s + l_w
//   memory    worker (2 + s)·P: parameters, gradients, optimizer state
//   W         2(n−1)M bytes sent by all the ranks
//   backward  the buckets, in backward's order (first_bucket_bytes, then
//             bucket_bytes each; one per tensor with bucket_bytes 0),
//             carry all of O
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingFormula : public ReplicatedFormula {
 public:
  std::string name() const override { return "ring"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    const double all_reduce = 2 * (n - 1);  // ring steps, c_s each
    const double buckets = static_cast<double>(RingAllReduces(in));
    p.bandwidth_s = RingBandwidthSeconds(in);
    p.latency_s = buckets * RingLatencySeconds(in);
    p.streamed_cpu_s = 2 * share * M * c.allreduce_byte_s +
                       buckets * all_reduce * c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s;
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
    RunBucketAllReduces(in, p, budget, 2 * (n - 1), run);
    return true;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingFormula, 3);

}  // namespace ringside
