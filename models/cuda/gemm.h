// Row-major matrix products on cuBLAS for the CUDA models (CudaMlp,
// CudaCharLm), in full float32 or, for bf16 mixed precision
// (models/precision.h), with bfloat16 operands multiplied on the tensor
// cores and accumulated and written in float32 (cublasGemmEx,
// CUBLAS_COMPUTE_32F), as PyTorch's bf16 autocast computes a product's
// sums.
//
// cuBLAS is column-major, and a row-major r x c matrix is the column-major
// c x r one (its transpose), so C = op(A) op(B) is asked of cuBLAS as
// C^T = op(B)^T op(A)^T: operands swapped, same transpose flags.
//
// Bf16Slots holds the bfloat16 copies a model rounds its float32 operands
// into, product by product. CUDA code only (needs the CUDA headers;
// compiled with --config=cuda). Thread-compatible.
#ifndef RINGSIDE_MODELS_CUDA_GEMM_H_
#define RINGSIDE_MODELS_CUDA_GEMM_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/device_buffer.h"

namespace ringside {

// C (m x n, float32) = op(A) op(B) with op(A) m x k and op(B) k x n; A is
// stored m x k (k x m if trans_a), B k x n (n x k if trans_b). A and B are
// float32, or with `bf16` bfloat16 (2-byte elements, as LaunchToBf16
// writes them). On the stream `handle` is bound to. INVALID_ARGUMENT when
// a size exceeds cuBLAS's int; cuBLAS's own errors otherwise.
absl::Status RowMajorGemm(cublasHandle_t handle, bool trans_a, bool trans_b,
                          int64_t m, int64_t n, int64_t k, const void* a,
                          const void* b, float* c, bool bf16);

// The same for `count` independent products, the matrices of each operand
// stride_* elements apart.
absl::Status RowMajorBatchedGemm(cublasHandle_t handle, bool trans_a,
                                 bool trans_b, int64_t m, int64_t n, int64_t k,
                                 const void* a, int64_t stride_a, const void* b,
                                 int64_t stride_b, float* c, int64_t stride_c,
                                 int64_t count, bool bf16);

// Room for `elements` bfloat16 values in a float buffer, and its bits.
absl::StatusOr<DeviceBuffer> Bf16Buffer(int device, int64_t elements);
uint16_t* Bf16(const DeviceBuffer& buffer);

// `slots` scratch buffers of bfloat16 values, each rewritten at every
// Round into it. Everything a model enqueues runs in order on one stream,
// so a slot may be reused as soon as the product that read it is enqueued.
class Bf16Slots {
 public:
  // Grows to `slots` buffers of at least `elements` each (blocking when it
  // allocates); keeps them when they are large enough already.
  absl::Status Reserve(int device, int slots, int64_t elements);
  // Enqueues x[0, count) rounded to bfloat16 into slot `slot` on `stream`
  // and returns the copy. INVALID_ARGUMENT when `slot` is not reserved or
  // `count` does not fit it.
  absl::StatusOr<const void*> Round(int slot, const float* x, int64_t count,
                                    cudaStream_t stream);

 private:
  std::vector<DeviceBuffer> slots_;
  int64_t elements_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_GEMM_H_
