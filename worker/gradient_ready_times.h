// GradientReadyTimes: when each gradient became ready within a step, for
// the cost model's overlap of communication with backward
// (experiments/cost/cost_model.h, CostInputs::gradient_ready). Per tensor
// it averages, over the measured steps, the seconds from the step's
// compute start (the first pass's ForwardBackward call, so earlier
// accumulation passes count) to the moment the model reported the
// gradient ready, on the host's steady clock. On a CUDA device a report
// means the kernels were queued, not run, so the trainer records nothing
// there. Thread-compatible: the training thread only.
#ifndef RINGSIDE_WORKER_GRADIENT_READY_TIMES_H_
#define RINGSIDE_WORKER_GRADIENT_READY_TIMES_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/tensor_layout.h"

namespace ringside {

class GradientReadyTimes {
 public:
  explicit GradientReadyTimes(const TensorLayout& layout);

  // A step whose compute started at `compute_start_s`; `measured`: a step
  // the run measures (after the warm-up), whose reports count.
  void BeginStep(double compute_start_s, bool measured);
  // Tensor `tensor` (a layout index) became ready at `now_s`. A tensor
  // reported twice in a step keeps its first report.
  void Mark(int tensor, double now_s);

  // {"tensors": [{"tensor": i, "bytes": b, "ready_s": t}, ...]} in the
  // order the gradients became ready (mean ready time), only tensors
  // reported in every measured step; null when no step was measured.
  nlohmann::json Json() const;

 private:
  const TensorLayout& layout_;
  std::vector<double> sum_s_;      // per tensor, over measured steps
  std::vector<int64_t> reports_;   // measured steps that reported it
  std::vector<bool> seen_;         // reported in the current step
  int64_t measured_steps_ = 0;
  double start_s_ = 0;
  bool measuring_ = false;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_GRADIENT_READY_TIMES_H_
