// OneBitAdamOptimizer: 1-bit Adam's update rule (Tang et al., "1-bit Adam:
// Communication Efficient Large-Scale Training with Adam's Convergence
// Speed", ICML 2021; DeepSpeed's OnebitAdam), the optimizer each rank of
// ring_onebit_adam applies. Two stages, by the update's `step` (from 1):
//   step <= freeze_steps  Adam (models/optimizer.h, PyTorch's form) on the
//                         averaged gradients: the warm-up, which also
//                         settles the variance v;
//   step >  freeze_steps  `grads` hold the ranks' averaged compressed
//                         momentum (onebit_adam_hook.h made it from each
//                         rank's β1·m + (1 − β1)·(g + wd·p)), so
//                         m = grads; v stays frozen at the warm-up's last;
//                         p -= lr · (m / (1 − β1^step)) /
//                              (sqrt(v / (1 − β2^freeze_steps)) + eps).
// An element whose frozen v is exactly 0 (no gradient in the whole
// warm-up: an unused input, an embedding row never seen) keeps m = 0 and
// does not move: one bit cannot say 0, and ±s over sqrt(0) + eps would
// throw it by lr·s/eps. DeepSpeed asks the user for such a mask
// (exp_avg_mask); here v supplies it.
// The bias corrections continue Adam's: m's at the update's step, v's at
// the step it froze. DeepSpeed's OnebitAdam applies none in either stage;
// here the warm-up is exactly ringside's Adam, so freeze_steps past the
// run equals ring with Adam.
// Its state is Adam's (m, then v): the checkpoint layout of an Adam run.
// The momentum span (MomentumState) is what the hook reads during
// backward; it changes only in Apply.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_OPTIMIZER_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/optimizer_config.h"
#include "models/optimizer.h"

namespace ringside {

class OneBitAdamOptimizer final : public Optimizer {
 public:
  // INVALID_ARGUMENT unless config.type is "adam" (naming what it got) and
  // freeze_steps >= 1 (the variance must be measured before it freezes).
  static absl::StatusOr<std::unique_ptr<OneBitAdamOptimizer>> Create(
      const OptimizerConfig& config, int64_t num_elements,
      int64_t freeze_steps);

  void Apply(int64_t state_offset, absl::Span<float> params,
             absl::Span<const float> grads, int64_t step) override;
  int64_t state_bytes() const override { return adam_->state_bytes(); }
  std::vector<absl::Span<float>> StateBuffers() override {
    return adam_->StateBuffers();
  }
  // Adam's first moment m, the momentum every rank holds alike.
  absl::Span<const float> MomentumState() { return adam_->StateBuffers()[0]; }

 private:
  OneBitAdamOptimizer(const OptimizerConfig& config, int64_t freeze_steps,
                      std::unique_ptr<Optimizer> adam)
      : config_(config), freeze_steps_(freeze_steps), adam_(std::move(adam)) {}

  const OptimizerConfig config_;
  const int64_t freeze_steps_;
  std::unique_ptr<Optimizer> adam_;  // owns m and v
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_OPTIMIZER_H_
