// baseline: one worker, no synchronization (always n = 1, whatever the
// inputs' n).
//   comm      0
//   CPU       0
//   memory    worker (2 + s)·P: parameters, gradients, optimizer state
//   W         0 bytes sent
//   backward  nothing to overlap
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class BaselineFormula : public ReplicatedFormula {
 public:
  std::string name() const override { return "baseline"; }
  void Terms(const CostInputs& in, Prediction& p) const override {
    p.workers = 1;
  }
  double BytesSentPerStep(const CostInputs& in) const override { return 0; }
  bool OneWorkerOnly() const override { return true; }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(BaselineFormula, 0);

}  // namespace ringside
