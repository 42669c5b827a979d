// Kernels of models/cuda/bf16_kernels.h: a grid-stride loop over 64-bit
// indices.
#include <cuda_bf16.h>

#include <algorithm>

#include "models/cuda/bf16_kernels.h"

namespace ringside {
namespace kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__global__ void ToBf16Kernel(const float* x, __nv_bfloat16* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    out[i] = __float2bfloat16_rn(x[i]);
  }
}

}  // namespace

cudaError_t LaunchToBf16(const float* x, uint16_t* out, int64_t n,
                         cudaStream_t stream) {
  static_assert(sizeof(__nv_bfloat16) == sizeof(uint16_t),
                "bfloat16 is 2 bytes");
  if (n <= 0) return cudaSuccess;
  const int blocks = static_cast<int>(
      std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
  ToBf16Kernel<<<blocks, kThreads, 0, stream>>>(
      x, reinterpret_cast<__nv_bfloat16*>(out), n);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ringside
