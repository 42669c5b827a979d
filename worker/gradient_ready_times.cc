#include "worker/gradient_ready_times.h"

#include <algorithm>

namespace ringside {

GradientReadyTimes::GradientReadyTimes(const TensorLayout& layout)
    : layout_(layout),
      sum_s_(layout.num_tensors(), 0.0),
      reports_(layout.num_tensors(), 0),
      seen_(layout.num_tensors(), false) {}

void GradientReadyTimes::BeginStep(double compute_start_s, bool measured) {
  start_s_ = compute_start_s;
  measuring_ = measured;
  if (measured) ++measured_steps_;
  std::fill(seen_.begin(), seen_.end(), false);
}

void GradientReadyTimes::Mark(int tensor, double now_s) {
  if (!measuring_ || tensor < 0 || tensor >= layout_.num_tensors() ||
      seen_[tensor]) {
    return;
  }
  seen_[tensor] = true;
  sum_s_[tensor] += now_s - start_s_;
  ++reports_[tensor];
}

nlohmann::json GradientReadyTimes::Json() const {
  if (measured_steps_ == 0) return nullptr;
  std::vector<int> order;
  for (int i = 0; i < layout_.num_tensors(); ++i) {
    if (reports_[i] == measured_steps_) order.push_back(i);
  }
  const double steps = static_cast<double>(measured_steps_);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return sum_s_[a] < sum_s_[b];
  });
  nlohmann::json tensors = nlohmann::json::array();
  for (int i : order) {
    tensors.push_back({{"tensor", i},
                       {"bytes", layout_.tensor(i).size * 4},
                       {"ready_s", sum_s_[i] / steps}});
  }
  return {{"tensors", tensors}};
}

}  // namespace ringside
