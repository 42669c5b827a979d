// SyntheticModel: a Model whose tensor layout is a GradientProfile's (the
// exact gradient tensors of ResNet-50, VGG-16, BERT-base, GPT-2, ...), with
// a cheap exact loss and an optional emulated compute time, so that
// communication studies move a real network's tensors on machines that
// cannot run the network. Its outputs are labelled emulated
// (Model::emulated() is true).
//
// Loss. Every example i carries one feature x_i (kFeatureDim = 1, e.g. from
// SyntheticClassification) that sets a scalar c_i = 1 + x_i / 2, and a fixed
// pattern u_j in [-1, 1) (Pattern(j), a hash of the element index j) sets
// the target c_i * u of example i:
//   L(w) = (1/b) sum_i 0.5 * ||w - c_i u||^2
//        = 0.5 * (||w - cbar u||^2 + var(c) ||u||^2),
//   dL/dw_j = w_j - cbar u_j,
// with cbar and var(c) the batch mean and variance of c_i. The gradient is
// exact, deterministic, depends on the batch only through its mean (so the
// mean of N workers' gradients on slices of a batch equals the gradient of
// the whole batch: the equivalence oracle holds to float32 rounding), costs
// O(P) per step whatever the batch size, and is O(1) per element (the loss
// is a sum over elements, not a mean), so optimizer steps move parameters
// and the oracle compares something that changes.
//
// Emulated compute. With emulated_compute_s = T > 0, ForwardBackward takes
// at least T of wall time: a forward share F = forward_fraction * T before
// the first gradient, then backward, where tensor i (reported last tensor
// first) becomes ready at start + F + (T - F) * S_i / P, S_i being the
// elements of tensors i..n-1 and P the total, i.e. at a time proportional
// to the cumulative size produced so far, like a real backward. With T = 0
// and a profile that carries measured compute (a profile file's
// "compute"), the measured forward F and backward B hold instead, times
// compute_scale: tensor i becomes ready at start + F + its measured ready
// time (proportional to size, as above, where the file has none). The real
// arithmetic counts towards the time; the model sleeps only for what is
// left.
// Evaluate is not emulated (it is not a measured step).
//
// Thread-compatible: one instance per worker thread.
#ifndef RINGSIDE_MODELS_SYNTHETIC_MODEL_H_
#define RINGSIDE_MODELS_SYNTHETIC_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/gradient_profiles.h"
#include "models/model.h"

namespace ringside {

struct SyntheticModelOptions {
  // Wall time one ForwardBackward takes at least, in seconds (>= 0,
  // finite). 0: only the real arithmetic (about a nanosecond per element).
  double emulated_compute_s = 0.0;
  // Share of emulated_compute_s spent before the first gradient is ready
  // (the forward pass), in [0, 1). Default 1/3: backward costs about twice
  // the forward, as in real networks.
  double forward_fraction = 1.0 / 3.0;
  // Multiplies a profile's measured compute (a faster or slower device),
  // > 0. Unused with emulated_compute_s > 0.
  double compute_scale = 1.0;
};

class SyntheticModel : public Model {
 public:
  // Floats per example in Batch::features.
  static constexpr int64_t kFeatureDim = 1;

  // INVALID_ARGUMENT on bad options or a profile whose tensors do not form
  // a layout (empty, duplicate names, non-positive dimensions).
  static absl::StatusOr<std::unique_ptr<SyntheticModel>> Create(
      GradientProfile profile, const SyntheticModelOptions& options = {});

  // "synthetic:<profile name>", e.g. "synthetic:resnet50".
  std::string name() const override;
  const TensorLayout& layout() const override { return layout_; }
  const GradientProfile& profile() const { return profile_; }
  const SyntheticModelOptions& options() const { return options_; }
  // Uniform in [-1, 1), a counter-based hash of (seed, element index).
  void InitParams(uint64_t seed, absl::Span<float> params) const override;
  // Blocking for at least options().emulated_compute_s (see above).
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, absl::Span<const float> params,
      absl::Span<float> grads, const GradientReadyFn& on_ready) override;
  absl::StatusOr<double> Evaluate(const Batch& batch,
                                  absl::Span<const float> params) override;
  // Nominal 6 * parameters (the dense-layer estimate); the emulated time,
  // not this, sets the step time.
  double FlopsPerExample() const override;
  bool emulated() const override { return true; }
  // T, or the profile's measured forward + backward times compute_scale
  // (T = 0); 0 when neither.
  double EmulatedComputeSeconds() const override;
  // Scales the emulated compute (true), when there is any: T > 0 or a
  // profile's measured compute.
  bool ScaleEmulatedCompute(double factor) override;
  // Reports parameter use: the emulated forward pass spends its share of
  // the time tensor by tensor in layout order (needed, wait, forward_done);
  // backward reads every tensor, last first.
  bool ReportsParamUse() const override { return true; }
  void SetParamUseHooks(const ParamUseHooks* hooks) override {
    hooks_ = hooks;
  }

  // The target pattern u_j of element j, in [-1, 1).
  static float Pattern(int64_t element) {
    const uint32_t h = static_cast<uint32_t>(element) * 0x9E3779B1u;
    return static_cast<float>(static_cast<int32_t>(h)) * 0x1p-31f;
  }
  // The scalar c_i of an example whose feature is x.
  static double Coefficient(float x) { return 1.0 + 0.5 * double{x}; }

 private:
  SyntheticModel(GradientProfile profile, const SyntheticModelOptions& options,
                 TensorLayout layout);
  absl::Status CheckBatch(const Batch& batch) const;
  absl::Status CheckSpan(const char* what, size_t size) const;
  // Whether the profile's measured compute sets the time (T = 0).
  bool UsesProfileCompute() const {
    return options_.emulated_compute_s <= 0 && profile_.compute.has_value();
  }
  // Mean and (population) variance of c_i over the batch.
  void BatchMoments(const Batch& batch, double* mean, double* variance) const;

  GradientProfile profile_;
  SyntheticModelOptions options_;
  TensorLayout layout_;
  double pattern_sq_norm_ = 0;  // ||u||^2
  const ParamUseHooks* hooks_ = nullptr;
  double compute_scale_ = 1.0;  // ScaleEmulatedCompute
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_SYNTHETIC_MODEL_H_
