// CudaCharLm: the character transformer of models/transformer/charlm.h on
// one CUDA device. Same configuration, tensor layout (charlm_layout.h),
// seeded initialization and readiness order as the CPU CharLm, so its loss
// and gradients equal the CPU model's to float32 rounding. Matrix products
// are cuBLAS SGEMMs in full float32 (no TF32; NVIDIA_TF32_OVERRIDE=1 would
// change that), the attention's per-head products strided-batched SGEMMs;
// LayerNorm, GELU, the causal softmax, the embedding gather and its
// deterministic scatter-add, the head permutes, bias/residual adds and the
// cross-entropy are our kernels (charlm_kernels.h).
//
// The device-side contract is CudaMlp's (models/cuda/cuda_mlp.h):
// parameters and gradients are caller-owned flat device buffers of
// layout().total_elements() floats on device(); ForwardBackward enqueues
// everything on `stream`, records grad_ready_event(i) right after the
// kernels that finish gradient i (and the last read of parameters i) and
// then calls on_ready(i) on the calling thread: the gradient is ENQUEUED,
// not computed -- order readers after the event. The model keeps per-batch
// scratch (activations for backward), grown to the largest batch seen.
// Each call makes device() current on the calling thread.
//
// Utilization: last_compute_seconds() is the device time between CUDA
// events recorded around the step's kernels.
//
// Built with --config=cuda this is the real model (cuda_charlm.cc);
// without it Create returns UNIMPLEMENTED "built without CUDA (bazel build
// --config=cuda)", so this header needs no CUDA headers.
// Thread-compatible: one instance per worker thread.
#ifndef RINGSIDE_MODELS_TRANSFORMER_CUDA_CUDA_CHARLM_H_
#define RINGSIDE_MODELS_TRANSFORMER_CUDA_CUDA_CHARLM_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/cuda/cuda_handles.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/tensor_layout.h"
#include "models/transformer/charlm_layout.h"

namespace ringside {

class CudaCharLm {
 public:
  // `device`: CUDA device index. Blocking (creates the cuBLAS handle and
  // events). Errors: INVALID_ARGUMENT on a bad config or device; CUDA's and
  // cuBLAS's own (UNAVAILABLE "...cudaErrorInsufficientDriver..." without
  // a GPU); UNIMPLEMENTED without --config=cuda.
  static absl::StatusOr<std::unique_ptr<CudaCharLm>> Create(
      const CharLmConfig& config, int device = 0);

  virtual ~CudaCharLm() = default;

  virtual const CharLmConfig& config() const = 0;
  virtual const TensorLayout& layout() const = 0;
  virtual int device() const = 0;

  // CharLmInitParams into host memory (same bits as CharLm::InitParams).
  virtual void InitParams(uint64_t seed,
                          absl::Span<float> host_params) const = 0;
  // The same, copied into the device buffer `d_params`. Blocking.
  virtual absl::Status InitDeviceParams(uint64_t seed,
                                        float* d_params) const = 0;

  // Forward and backward of `batch` (host memory: size x (block_size + 1)
  // tokens; copied in) under `d_params`; writes d(mean loss)/d(params) into
  // `d_grads` (every element) and returns the mean loss. Calls on_ready
  // (may be empty) in CharLmReadinessOrder as described above. Blocking:
  // returns once the step's work on `stream` is done (the loss is read
  // back). INVALID_ARGUMENT for a batch that does not fit
  // (CheckCharLmBatch) or a null pointer; CUDA/cuBLAS errors otherwise.
  virtual absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const float* d_params, float* d_grads,
      const GradientReadyFn& on_ready, CudaStream stream) = 0;

  // Mean loss of `batch` under `d_params`, CharLm::kEvalChunk examples at
  // a time; no gradients, no timing. Blocking.
  virtual absl::StatusOr<double> Evaluate(const Batch& batch,
                                          const float* d_params,
                                          CudaStream stream) = 0;

  // The event recorded once gradient `tensor` is enqueued (see above).
  // Owned by the model. Requires 0 <= tensor < layout().num_tensors().
  virtual CudaEvent grad_ready_event(int tensor) const = 0;

  // Device time of the last ForwardBackward's kernels, seconds (0 before
  // the first).
  virtual double last_compute_seconds() const = 0;

  double FlopsPerExample() const { return CharLmFlopsPerExample(config()); }
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CUDA_CUDA_CHARLM_H_
