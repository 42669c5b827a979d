// MLP: fully connected layers with ReLU between them and softmax
// cross-entropy on the last, in Eigen on the CPU. Parameters per layer l:
// "fc{l}.weight" (in x out, row-major) and "fc{l}.bias" (out). Gradients
// are reported last layer first; a layer's tensors are reported after its
// input gradient has been computed (the Model readiness contract). Reports
// parameter use: forward reads layer l's weight and bias for layer l;
// backward reads the weight of every layer but the first (for the input
// gradient).
// In Precision::kBf16 (models/precision.h) every product's operands (the
// layer's input, its weights, the delta) are rounded to bfloat16 first and
// multiplied by the same float32 kernels: the CUDA MLP's bf16 arithmetic
// up to the order of the sums, at float32's speed (a numerics reference,
// not a faster model); bias, ReLU, the loss and the gradients stay float32.
// Thread-compatible.
#ifndef RINGSIDE_MODELS_MLP_H_
#define RINGSIDE_MODELS_MLP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model.h"
#include "models/precision.h"

namespace ringside {

class Mlp : public Model {
 public:
  // widths: input, hidden..., classes (>= 2 entries, each > 0).
  static absl::StatusOr<std::unique_ptr<Mlp>> Create(
      std::vector<int64_t> widths, Precision precision = Precision::kFp32);

  std::string name() const override { return "mlp"; }
  Precision precision() const { return precision_; }
  const TensorLayout& layout() const override { return layout_; }
  // He-uniform weights, zero biases, from a seeded std::mt19937_64.
  void InitParams(uint64_t seed, absl::Span<float> params) const override;
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, absl::Span<const float> params,
      absl::Span<float> grads, const GradientReadyFn& on_ready) override;
  absl::StatusOr<double> Evaluate(const Batch& batch,
                                  absl::Span<const float> params) override;
  double FlopsPerExample() const override;
  bool ReportsParamUse() const override { return true; }
  void SetParamUseHooks(const ParamUseHooks* hooks) override { hooks_ = hooks; }

 private:
  Mlp(std::vector<int64_t> widths, TensorLayout layout, Precision precision);
  bool bf16() const { return precision_ == Precision::kBf16; }
  // A product's operand x[0, count): itself in float32; in bf16 its
  // rounded copy in `scratch`.
  const float* Operand(const float* x, int64_t count,
                       std::vector<float>& scratch) const;
  absl::Status CheckBatch(const Batch& batch) const;
  // INVALID_ARGUMENT unless `size` == layout_.total_elements().
  absl::Status CheckSpan(const char* what, size_t size) const;
  // Fills acts_[1..L-1] with hidden activations and acts_[0] with logits;
  // calls the parameter-use hooks when `hooks` is set.
  void Forward(const Batch& batch, absl::Span<const float> params,
               const ParamUseHooks* hooks);

  std::vector<int64_t> widths_;
  TensorLayout layout_;
  // Scratch activations reused across calls (one per layer boundary):
  // acts_[l] is layer l's input for l >= 1; acts_[0] holds the logits.
  std::vector<std::vector<float>> acts_;
  std::vector<float> delta_, delta_prev_;
  Precision precision_;
  // kBf16 only (empty otherwise): each layer's rounded input (x16_[l],
  // kept from the forward for the weight gradient), a weight's and the
  // delta's rounded copies.
  std::vector<std::vector<float>> x16_;
  std::vector<float> w16_, delta16_;
  const ParamUseHooks* hooks_ = nullptr;
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_MLP_H_
