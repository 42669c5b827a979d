// CudaMlp: the MLP of models/mlp.h on one CUDA device. Same widths, tensor
// layout ("fc{l}.weight" in x out row-major, "fc{l}.bias"), seeded
// initialization (the host Mlp's InitParams) and readiness order (last layer
// first, weight then bias) as the CPU Mlp, so its gradients equal the CPU
// model's to float32 rounding. Matrix products are cuBLAS SGEMMs in full
// float32 (no TF32; NVIDIA_TF32_OVERRIDE=1 in the environment would change
// that); bias, ReLU, the softmax cross-entropy and the bias gradients are
// our kernels (mlp_kernels.h).
//
// Precision::kBf16 (models/precision.h), mixed precision as PyTorch's bf16
// autocast with float32 master weights: each step rounds the parameters,
// the input and each layer's activation to bfloat16 copies, and every
// matrix product (forward, dW and the input gradient, whose deltas are
// rounded too) multiplies bfloat16 operands on the tensor cores,
// accumulating and writing float32 (cublasGemmEx, CUBLAS_COMPUTE_32F). The
// activations the ReLU masks read, the logits, the loss, the deltas, the
// gradients in `d_grads` and the bias gradients stay float32, as do the
// parameters the optimizer updates. The gradients then differ from the
// float32 model's by bfloat16's rounding of the products' operands (8
// significand bits), not by float32 rounding.
//
// Parameters and gradients are caller-owned flat device buffers of
// layout().total_elements() floats on device(); the model keeps only
// per-batch scratch (inputs, activations, deltas; grown to the largest batch
// seen). Each call makes device() current on the calling thread.
//
// Streams and readiness (the Model contract of models/model.h, on a GPU):
// ForwardBackward enqueues all its work on `stream` in order: input copies
// (none when the caller staged the input: UseStagedInput, cuda_model.h),
// forward, loss, then per layer from the last: dW, db, the input gradient
// (the last read of the layer's weights). Right after the kernels of layer l
// it records grad_ready_event(i) on `stream` and calls on_ready(i), for
// i = weight of l, then bias of l. When on_ready(i) runs on the calling
// thread, the gradient is ENQUEUED, NOT COMPUTED: order device work that
// reads gradient i, or overwrites parameters i, after the event
// (cudaStreamWaitEvent(comm_stream, grad_ready_event(i)) -- a comm stream
// then overlaps the rest of backward), or wait for it on the host
// (cudaEventSynchronize). The event is re-recorded by the next
// ForwardBackward; waits enqueued before then are unaffected.
// The caller orders the other direction: `d_params` must be final and
// `d_grads` free to overwrite for work on `stream` (e.g. make `stream` wait
// for the events of the comm stream's last all-reduce / optimizer step).
//
// Parameter use (cuda_model.h; the CPU Mlp's order, so zero3 runs on it):
// with hooks set, per layer l in forward needed(weight l), needed(bias l)
// before its SGEMM is enqueued and forward_done(weight l), forward_done(bias
// l) after its bias kernel is; in backward needed(weight l) before the
// input-gradient SGEMM of each layer l > 0 (backward never reads the biases
// or layer 0's weights). Evaluate calls no hook.
//
// Utilization: compute time is measured with CUDA events recorded on
// `stream` around the step's kernels (after the input copies, before the
// loss read-back): last_compute_seconds() is that device time of the last
// ForwardBackward, including launch gaps between its kernels.
//
// Built with --config=cuda this is the real model (cuda_mlp.cc); without it
// Create returns UNIMPLEMENTED "built without CUDA (bazel build
// --config=cuda)", so this header needs no CUDA headers (handles are opaque,
// device/cuda_handles.h). Thread-compatible: one instance per worker thread.
#ifndef RINGSIDE_MODELS_CUDA_CUDA_MLP_H_
#define RINGSIDE_MODELS_CUDA_CUDA_MLP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_layout.h"
#include "device/cuda_handles.h"
#include "models/cuda/cuda_model.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/precision.h"

namespace ringside {

class CudaMlp : public CudaModel {
 public:
  // widths: input, hidden..., classes (>= 2 entries, each in [1, 2^31)).
  // `device`: CUDA device index. Blocking (creates the cuBLAS handle and
  // events). Errors: INVALID_ARGUMENT on bad widths; CUDA's and cuBLAS's
  // own (UNAVAILABLE "...cudaErrorInsufficientDriver..." without a GPU).
  // The model calls are CudaModel's (cuda_model.h) with the contract above;
  // ForwardBackward: INVALID_ARGUMENT also for a label outside the classes.
  static absl::StatusOr<std::unique_ptr<CudaMlp>> Create(
      std::vector<int64_t> widths, int device = 0,
      Precision precision = Precision::kFp32);
  std::string name() const override { return "mlp"; }
  bool ReportsParamUse() const override { return true; }
  void SetParamUseHooks(const ParamUseHooks* hooks) override { hooks_ = hooks; }

 protected:
  const ParamUseHooks* hooks_ = nullptr;  // not owned; null: none
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_CUDA_MLP_H_
