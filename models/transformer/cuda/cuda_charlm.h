// CudaCharLm: the character transformer of models/transformer/charlm.h on
// one CUDA device. Same configuration, tensor layout (charlm_layout.h),
// seeded initialization and readiness order as the CPU CharLm, so in fp32
// its loss and gradients equal the CPU model's to float32 rounding. In
// fp32 the matrix products are cuBLAS SGEMMs in full float32 (no TF32;
// NVIDIA_TF32_OVERRIDE=1 would change that), the attention's per-head
// products strided-batched SGEMMs;
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
// Parameter use (models/cuda/cuda_model.h), as the CPU CharLm: one unit --
// with hooks set, ForwardBackward calls needed(i) for every tensor, in
// layout order, before it enqueues the first forward kernel, and no
// forward_done; on_ready(i) then ends tensor i's use. Evaluate calls none.
//
// Precision::kBf16 (models/precision.h), mixed precision as PyTorch's bf16
// autocast with float32 master weights: every matrix product's operands
// (the weights, the activations, the attention's q, k, v and
// probabilities, the deltas) are rounded to bfloat16 copies at each use
// and multiplied with their sums in float32 (models/cuda/gemm.h); the
// parameters, gradients, LayerNorm, GELU, the softmax, the cross-entropy
// and every other element-wise step stay float32, so a strategy
// communicates float32 gradients either way.
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
#include "core/tensor_layout.h"
#include "device/cuda_handles.h"
#include "models/cuda/cuda_model.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/precision.h"
#include "models/transformer/charlm_layout.h"

namespace ringside {

class CudaCharLm : public CudaModel {
 public:
  // `device`: CUDA device index. Blocking (creates the cuBLAS handle and
  // events). Errors: INVALID_ARGUMENT on a bad config or device; CUDA's and
  // cuBLAS's own (UNAVAILABLE "...cudaErrorInsufficientDriver..." without
  // a GPU); UNIMPLEMENTED without --config=cuda. The model calls are
  // CudaModel's (models/cuda/cuda_model.h); ForwardBackward takes a batch
  // of size x (block_size + 1) tokens (CheckCharLmBatch) and Evaluate runs
  // CharLm::kEvalChunk examples at a time.
  static absl::StatusOr<std::unique_ptr<CudaCharLm>> Create(
      const CharLmConfig& config, int device = 0,
      Precision precision = Precision::kFp32);

  virtual const CharLmConfig& config() const = 0;

  double FlopsPerExample() const override {
    return CharLmFlopsPerExample(config());
  }
  std::string name() const override { return "charlm"; }
  bool ReportsParamUse() const override { return true; }
  void SetParamUseHooks(const ParamUseHooks* hooks) override { hooks_ = hooks; }

 protected:
  const ParamUseHooks* hooks_ = nullptr;  // not owned; null: none
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CUDA_CUDA_CHARLM_H_
