// Model: a differentiable function whose parameters are named float32
// tensors laid out in one caller-owned flat buffer (TensorLayout).
//
// Gradient readiness contract: ForwardBackward calls on_ready(i) once per
// tensor i as soon as its gradient is final AND the model will not read
// tensor i's parameters again during this call (so a strategy may start
// communicating it, and may even overwrite its parameters). Calls come in
// backward order (last layer first) on the calling thread.
//
// Parameter-use contract (ReportsParamUse models only, for strategies that
// keep the parameters sharded: ZeRO stage 3 / FSDP): with hooks set
// (SetParamUseHooks), ForwardBackward calls needed(i) before it first reads
// tensor i's parameters in the forward pass, forward_done(i) after its last
// read of them there, and needed(i) again before it first reads them in the
// backward pass (only for the tensors backward reads); on_ready(i) then
// says they are not read again. Until needed(i) returns, tensor i's
// parameters may hold anything. CUDA models also call writes_gradient(i)
// before they first write gradient i (models/cuda/cuda_model.h: a device
// strategy maps the gradient's memory there); host models need not.
// Evaluate reads every tensor and calls no hook. The calls come on the
// calling thread, in the same order for the same model and batch size.
//
// Thread-compatible: one Model instance per worker thread.
#ifndef RINGSIDE_MODELS_MODEL_H_
#define RINGSIDE_MODELS_MODEL_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_layout.h"
#include "models/dataset.h"

namespace ringside {

using GradientReadyFn = std::function<void(int tensor_index)>;

// The parameter-use hooks (see the file comment); either may be empty.
struct ParamUseHooks {
  std::function<void(int tensor_index)> needed;
  std::function<void(int tensor_index)> forward_done;
  std::function<void(int tensor_index)> writes_gradient;  // may be empty
};

class Model {
 public:
  virtual ~Model() = default;

  // Short name, e.g. "mlp".
  virtual std::string name() const = 0;

  virtual const TensorLayout& layout() const = 0;

  // Writes the seeded initial parameters (same seed => same bits).
  virtual void InitParams(uint64_t seed, absl::Span<float> params) const = 0;

  // Forward and backward on `batch`. Writes d(mean loss)/d(params) into
  // `grads` (every element overwritten) and returns the mean loss.
  // `params` and `grads` have layout().total_elements() floats.
  // INVALID_ARGUMENT if the batch does not fit the model.
  virtual absl::StatusOr<double> ForwardBackward(
      const Batch& batch, absl::Span<const float> params,
      absl::Span<float> grads, const GradientReadyFn& on_ready) = 0;

  // Mean loss of `batch` under `params`; no gradients.
  virtual absl::StatusOr<double> Evaluate(const Batch& batch,
                                          absl::Span<const float> params) = 0;

  // Floating-point operations of one ForwardBackward per example (for
  // reports; an estimate is fine).
  virtual double FlopsPerExample() const = 0;

  // True when the compute is emulated (a synthetic workload that sleeps for
  // a real model's device time) rather than a real model's arithmetic;
  // every output of a run on such a model says so.
  virtual bool emulated() const { return false; }
  // The wall time one ForwardBackward is emulated to take, before any
  // straggler factor (ScaleEmulatedCompute); 0 when none is emulated.
  virtual double EmulatedComputeSeconds() const { return 0; }
  // Stragglers (worker/stragglers.h): makes later ForwardBackward calls
  // take `factor` (> 0) times the emulated compute time; false (default)
  // when this model emulates none, so its compute cannot be scaled.
  virtual bool ScaleEmulatedCompute(double factor) {
    (void)factor;
    return false;
  }

  // Whether ForwardBackward reports parameter use (the file comment).
  virtual bool ReportsParamUse() const { return false; }
  // The hooks later ForwardBackward calls use (not owned; they must outlive
  // those calls); null: none. Ignored unless ReportsParamUse.
  virtual void SetParamUseHooks(const ParamUseHooks* hooks) {}
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_MODEL_H_
