#include "models/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ringside {
namespace {

// Programmer bugs (broken preconditions) abort with a message.
void CheckOrDie(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "optimizer.cc: check failed: %s\n", what);
  std::abort();
}

void CheckRange(int64_t state_offset, absl::Span<float> params,
                absl::Span<const float> grads, int64_t num_elements) {
  CheckOrDie(params.size() == grads.size(), "params.size() == grads.size()");
  CheckOrDie(
      state_offset >= 0 &&
          state_offset + static_cast<int64_t>(params.size()) <= num_elements,
      "state range inside [0, num_elements)");
}

// PyTorch's SGD (dampening 0, no Nesterov): g' = g + wd * p;
// v = momentum * v + g'; p -= lr * v. With momentum 0 there is no state.
class SgdOptimizer : public Optimizer {
 public:
  SgdOptimizer(const OptimizerConfig& config, int64_t num_elements)
      : config_(config), num_elements_(num_elements) {
    if (config_.momentum != 0.0f) velocity_.assign(num_elements, 0.0f);
  }

  void Apply(int64_t state_offset, absl::Span<float> params,
             absl::Span<const float> grads, int64_t step) override {
    CheckRange(state_offset, params, grads, num_elements_);
    CheckOrDie(step >= 1, "step >= 1");
    const float lr = config_.LrAt(step);
    const float wd = config_.weight_decay;
    const size_t n = params.size();
    float* p = params.data();
    const float* g = grads.data();
    if (velocity_.empty()) {
      for (size_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
      return;
    }
    const float mu = config_.momentum;
    float* v = velocity_.data() + state_offset;
    for (size_t i = 0; i < n; ++i) {
      v[i] = mu * v[i] + (g[i] + wd * p[i]);
      p[i] -= lr * v[i];
    }
  }

  int64_t state_bytes() const override {
    return static_cast<int64_t>(velocity_.size() * sizeof(float));
  }

  std::vector<absl::Span<float>> StateBuffers() override {
    if (velocity_.empty()) return {};
    return {absl::MakeSpan(velocity_)};
  }

 private:
  const OptimizerConfig config_;
  const int64_t num_elements_;
  std::vector<float> velocity_;
};

// Adam (Kingma & Ba, PyTorch's form): g' = g + wd * p;
// m = b1 m + (1 - b1) g'; v = b2 v + (1 - b2) g'^2;
// p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
class AdamOptimizer : public Optimizer {
 public:
  AdamOptimizer(const OptimizerConfig& config, int64_t num_elements)
      : config_(config),
        num_elements_(num_elements),
        m_(num_elements, 0.0f),
        v_(num_elements, 0.0f) {}

  void Apply(int64_t state_offset, absl::Span<float> params,
             absl::Span<const float> grads, int64_t step) override {
    CheckRange(state_offset, params, grads, num_elements_);
    CheckOrDie(step >= 1, "step >= 1");
    const float b1 = config_.beta1;
    const float b2 = config_.beta2;
    const float lr = config_.LrAt(step);
    const float wd = config_.weight_decay;
    const float eps = config_.eps;
    const float bc1 = static_cast<float>(
        1.0 - std::pow(static_cast<double>(b1), static_cast<double>(step)));
    const float bc2 = static_cast<float>(
        1.0 - std::pow(static_cast<double>(b2), static_cast<double>(step)));
    const size_t n = params.size();
    float* p = params.data();
    const float* g = grads.data();
    float* m = m_.data() + state_offset;
    float* v = v_.data() + state_offset;
    for (size_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      const float mhat = m[i] / bc1;
      const float vhat = v[i] / bc2;
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }

  int64_t state_bytes() const override {
    return static_cast<int64_t>((m_.size() + v_.size()) * sizeof(float));
  }

  std::vector<absl::Span<float>> StateBuffers() override {
    return {absl::MakeSpan(m_), absl::MakeSpan(v_)};
  }

 private:
  const OptimizerConfig config_;
  const int64_t num_elements_;
  std::vector<float> m_, v_;
};

}  // namespace

std::vector<float> ExportOptimizerState(Optimizer& optimizer) {
  std::vector<float> out;
  for (absl::Span<float> b : optimizer.StateBuffers()) {
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

absl::Status ImportOptimizerState(Optimizer& optimizer,
                                  absl::Span<const float> state) {
  size_t total = 0;
  for (absl::Span<float> b : optimizer.StateBuffers()) total += b.size();
  if (state.size() != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer state has ", state.size(), " values; this optimizer needs ",
        total));
  }
  for (absl::Span<float> b : optimizer.StateBuffers()) {
    std::copy(state.begin(), state.begin() + b.size(), b.begin());
    state.remove_prefix(b.size());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(
    const OptimizerConfig& config, int64_t num_elements) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  if (num_elements < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer num_elements must be >= 0, got ", num_elements));
  }
  if (config.type == "sgd") {
    return std::unique_ptr<Optimizer>(new SgdOptimizer(config, num_elements));
  }
  return std::unique_ptr<Optimizer>(new AdamOptimizer(config, num_elements));
}

}  // namespace ringside
