// ring_topk: per bucket (ring's buckets), one all-gather of every rank's k
// (index, value) pairs, k = max(1, ⌈ρ·size⌉) per tensor (ρ =
// --topk_ratio, the strategy's default 0.01 where the run names none):
// K ≈ max(ρ·M/4, T) pairs, G = 8K bytes a rank per step, in the all-gather
// hooks' terms (GatheredBucketsFormula, formula_support.h):
//   comm      n = 1: the compression only; else (n−1) · 8K/B + b_r · (n−1)α
//   CPU       (M/4) · p_k at every n: the error feedback and the
//             selection (nth_element over every element), calibrated at
//             ratio 0.01; n > 1 besides: (n−1) · 8K · g_b + b_r · (n−1) ·
//             c_s + l_w. The sparse sum of the n ranks' pairs (n·K adds)
//             and the bucket's zeroing and division are not priced
//   memory    worker (3 + s)·P: parameters, gradients, optimizer state and
//             the error-feedback memory
//   W         n(n−1) · 8K bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy: the elements not sent wait in the error memory
// The first --compression_start_step steps are plain all-reduces of ring's
// buckets, priced by ring's formula (plain_first_steps).
#include <algorithm>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingTopkFormula final : public GatheredBucketsFormula {
 public:
  std::string name() const override { return "ring_topk"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb", "topk_ratio",
            "compression_start_step"};
  }
  std::optional<PlainFirstSteps> plain_first_steps() const override {
    return PlainFirstSteps{"compression_start_step", "ring", {}};
  }
  std::string LossyNote() const override { return "top-k sparsified"; }

 protected:
  double GatheredBytes(const CostInputs& in) const override {
    const double ratio = std::clamp(OptionNumber(in, "topk_ratio", 0.01),
                                    0.0, 1.0);
    const double pairs = std::max(ratio * in.model_bytes / 4,
                                  static_cast<double>(in.num_tensors));
    return 8 * std::min(pairs, in.model_bytes / 4);
  }
  double CompressionSeconds(const CostInputs& in) const override {
    return in.model_bytes / 4 * in.cpu.topk_element_s;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingTopkFormula, 15);

}  // namespace ringside
