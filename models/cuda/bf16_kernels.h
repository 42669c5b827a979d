// Rounding float32 to bfloat16 on the device, for the CUDA models' bf16
// mixed precision (models/precision.h): the matrix products' operands are
// bfloat16 copies of float32 tensors. Launch* enqueues one kernel on
// `stream` and returns at once with the launch's own error
// (cudaGetLastError); nothing is launched for an empty input. Only
// compiled with --config=cuda (nvcc; see tools/cuda.bzl), hence no absl
// here: wrap the results with device/cuda_status.h. Thread-safe.
#ifndef RINGSIDE_MODELS_CUDA_BF16_KERNELS_H_
#define RINGSIDE_MODELS_CUDA_BF16_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ringside {
namespace kernels {

// out[i] = x[i] rounded to bfloat16 (to nearest, ties to even: CUDA's
// __float2bfloat16_rn, as PyTorch's cast), for i in [0, n); `out` holds
// the bfloat16 bits (2 bytes an element).
cudaError_t LaunchToBf16(const float* x, uint16_t* out, int64_t n,
                         cudaStream_t stream);

}  // namespace kernels
}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_BF16_KERNELS_H_
