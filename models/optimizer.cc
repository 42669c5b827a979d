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

absl::Status CheckUnitInterval(const char* field, float value) {
  if (!(value >= 0.0f && value < 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer ", field, " must be in [0, 1), got ", value));
  }
  return absl::OkStatus();
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
    const float lr = config_.lr;
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
    const float lr = config_.lr;
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

absl::Status OptimizerConfig::Validate() const {
  if (type != "sgd" && type != "adam") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown optimizer type '", type, "' (known: sgd, adam)"));
  }
  // Also the fields this type ignores: a NaN there would make the config
  // unequal to itself (registrations and checkpoints could never match).
  for (const auto& [name, value] :
       {std::pair<const char*, float>{"lr", lr},
        {"momentum", momentum},
        {"beta1", beta1},
        {"beta2", beta2},
        {"eps", eps},
        {"weight_decay", weight_decay}}) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer ", name, " must be finite, got ", value));
    }
  }
  if (!(lr > 0.0f) || !std::isfinite(lr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer lr must be finite and > 0, got ", lr));
  }
  if (!(weight_decay >= 0.0f) || !std::isfinite(weight_decay)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer weight_decay must be finite and >= 0, got ", weight_decay));
  }
  if (type == "sgd") return CheckUnitInterval("momentum", momentum);
  if (absl::Status s = CheckUnitInterval("beta1", beta1); !s.ok()) return s;
  if (absl::Status s = CheckUnitInterval("beta2", beta2); !s.ok()) return s;
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer eps must be finite and > 0, got ", eps));
  }
  return absl::OkStatus();
}

proto::OptimizerConfig OptimizerConfig::ToProto() const {
  proto::OptimizerConfig p;
  p.set_type(type);
  p.set_lr(lr);
  p.set_momentum(momentum);
  p.set_beta1(beta1);
  p.set_beta2(beta2);
  p.set_eps(eps);
  p.set_weight_decay(weight_decay);
  return p;
}

OptimizerConfig OptimizerConfig::FromProto(const proto::OptimizerConfig& p) {
  OptimizerConfig c;
  c.type = p.type();
  c.lr = p.lr();
  c.momentum = p.momentum();
  c.beta1 = p.beta1();
  c.beta2 = p.beta2();
  c.eps = p.eps();
  c.weight_decay = p.weight_decay();
  return c;
}

bool OptimizerConfig::operator==(const OptimizerConfig& o) const {
  return type == o.type && lr == o.lr && momentum == o.momentum &&
         beta1 == o.beta1 && beta2 == o.beta2 && eps == o.eps &&
         weight_decay == o.weight_decay;
}

std::string OptimizerConfig::DebugString() const {
  if (type == "sgd") {
    return absl::StrFormat("sgd(lr=%g, momentum=%g, weight_decay=%g)", lr,
                           momentum, weight_decay);
  }
  return absl::StrFormat(
      "%s(lr=%g, beta1=%g, beta2=%g, eps=%g, weight_decay=%g)", type, lr, beta1,
      beta2, eps, weight_decay);
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
