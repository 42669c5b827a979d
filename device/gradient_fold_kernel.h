// The fold of gradient accumulation's last pass as one kernel:
// grads[i] = (grads[i] + stash[i]) * inverse for i in [0, count), rounded
// as cuBLAS's saxpy then sscal round it (the sum, then the product; no
// fused multiply-add), so the folded gradient equals the host's
// (worker/host_backend.cc) given equal inputs. Enqueues one kernel on
// `stream` and returns the launch's own error (a fault inside shows at the
// next synchronization); nothing for count <= 0.
//
// Only compiled with --config=cuda (nvcc; tools/cuda.bzl), hence no absl:
// wrap the result with device/cuda_status.h. Thread-safe.
#ifndef RINGSIDE_DEVICE_GRADIENT_FOLD_KERNEL_H_
#define RINGSIDE_DEVICE_GRADIENT_FOLD_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ringside {
namespace kernels {

cudaError_t LaunchFoldStash(float* grads, const float* stash, int64_t count,
                            float inverse, cudaStream_t stream);

}  // namespace kernels
}  // namespace ringside

#endif  // RINGSIDE_DEVICE_GRADIENT_FOLD_KERNEL_H_
