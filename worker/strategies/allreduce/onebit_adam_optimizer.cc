#include "worker/strategies/allreduce/onebit_adam_optimizer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<OneBitAdamOptimizer>>
OneBitAdamOptimizer::Create(const OptimizerConfig& config,
                            int64_t num_elements, int64_t freeze_steps) {
  if (config.type != "adam") {
    return absl::InvalidArgumentError(absl::StrCat(
        "1-bit Adam (ring_onebit_adam) compresses Adam's momentum and "
        "freezes its variance: it needs --optimizer=adam, not --optimizer=",
        config.type));
  }
  if (freeze_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "1-bit Adam (ring_onebit_adam) needs --compression_start_step >= 1 "
        "(got ", freeze_steps, "): its plain Adam warm-up measures the "
        "variance it then freezes (0 would divide by eps); DeepSpeed "
        "recommends 15-25% of the run's steps, compare passes 16"));
  }
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> adam,
                      Optimizer::Create(config, num_elements));
  return std::unique_ptr<OneBitAdamOptimizer>(
      new OneBitAdamOptimizer(config, freeze_steps, std::move(adam)));
}

void OneBitAdamOptimizer::Apply(int64_t state_offset, absl::Span<float> params,
                                absl::Span<const float> grads, int64_t step) {
  if (step <= freeze_steps_) {
    adam_->Apply(state_offset, params, grads, step);
    return;
  }
  const std::vector<absl::Span<float>> state = adam_->StateBuffers();
  if (params.size() != grads.size() || state_offset < 0 ||
      state_offset + params.size() > state[0].size()) {
    // A programmer's error, as Adam's own range check treats it.
    std::fprintf(stderr,
                 "onebit_adam_optimizer.cc: check failed: params and "
                 "grads of one size, inside the state\n");
    std::abort();
  }
  float* m = state[0].data() + state_offset;
  const float* v = state[1].data() + state_offset;
  const float lr = config_.LrAt(step);
  const float eps = config_.eps;
  const float bc1 = static_cast<float>(
      1.0 - std::pow(static_cast<double>(config_.beta1),
                     static_cast<double>(step)));
  const float bc2 = static_cast<float>(
      1.0 - std::pow(static_cast<double>(config_.beta2),
                     static_cast<double>(freeze_steps_)));
  const size_t n = params.size();
  float* p = params.data();
  const float* g = grads.data();
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == 0.0f) {  // never a gradient in the warm-up: masked
      m[i] = 0.0f;
      continue;
    }
    m[i] = g[i];
    p[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
  }
}

}  // namespace ringside
