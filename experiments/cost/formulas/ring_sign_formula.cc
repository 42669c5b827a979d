// ring_sign: per bucket (ring's buckets), one all-gather of every rank's
// sign bits and per-tensor scales, G ≈ M/32 + 4T bytes a rank per step, in
// the sign hooks' terms (SignedBucketsFormula, formula_support.h):
//   comm      n = 1: the compression only; else (n−1) · G/B + b_r · (n−1)α
//   CPU       (M/4) · (p_s + n · p_a) at every n: the packing and the n
//             ranks' signs added (calibrated); n > 1 besides: (n−1) · G ·
//             g_b + b_r · (n−1) · c_s + l_w. The bucket's zeroing and
//             division are not priced
//   memory    worker (3 + s)·P: parameters, gradients, optimizer state and
//             the error-feedback memory
//   W         n(n−1) · G bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy: one bit per element and a scale per tensor
// The first --compression_start_step steps are plain all-reduces of ring's
// buckets, priced by ring's formula (plain_first_steps).
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingSignFormula final : public SignedBucketsFormula {
 public:
  std::string name() const override { return "ring_sign"; }
  std::string LossyNote() const override { return "sign, 1 bit"; }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingSignFormula, 16);

}  // namespace ringside
