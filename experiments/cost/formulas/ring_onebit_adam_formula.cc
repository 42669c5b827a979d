// ring_onebit_adam: 1-bit Adam's compressed steps move what ring_sign's do
// (SignedBucketsFormula, formula_support.h: one all-gather per bucket of
// every rank's sign bits and per-tensor scales, G ≈ M/32 + 4T bytes a rank;
// the packing and the n ranks' signs added, calibrated), and its first
// --compression_start_step steps (the freeze_step; the study's 16) are
// plain all-reduces of ring's buckets with Adam, priced by ring's formula.
// Not priced apart: the momentum update the hook forms (one multiply-add an
// element) and the optimizer's cheaper frozen-variance step.
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class RingOneBitAdamFormula final : public SignedBucketsFormula {
 public:
  std::string name() const override { return "ring_onebit_adam"; }
  std::vector<std::string> study_flags() const override {
    return {"--compression_start_step=16"};
  }
  std::string LossyNote() const override {
    return "1-bit Adam: momentum signs";
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingOneBitAdamFormula, 17);

}  // namespace ringside
