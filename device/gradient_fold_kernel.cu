#include "device/gradient_fold_kernel.h"

#include <algorithm>

namespace ringside {
namespace kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__global__ void FoldStashKernel(float* grads, const float* stash,
                                int64_t count, float inverse) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    // __fadd_rn and __fmul_rn are never contracted into an FMA.
    grads[i] = __fmul_rn(__fadd_rn(grads[i], stash[i]), inverse);
  }
}

}  // namespace

cudaError_t LaunchFoldStash(float* grads, const float* stash, int64_t count,
                            float inverse, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const int blocks = static_cast<int>(
      std::min<int64_t>((count + kThreads - 1) / kThreads, kMaxBlocks));
  FoldStashKernel<<<blocks, kThreads, 0, stream>>>(grads, stash, count,
                                                   inverse);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ringside
