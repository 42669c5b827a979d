#include "device/gradient_stash.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cublas_handle.h"
#include "device/cuda_status.h"
#include "device/device_buffer.h"
#include "device/gradient_fold_kernel.h"

namespace ringside {

struct GradientStash::Impl {
  int device = 0;
  DeviceBuffer stash;
  OwnedCublasHandle blas;
};

GradientStash::GradientStash(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
GradientStash::GradientStash(GradientStash&&) noexcept = default;
GradientStash& GradientStash::operator=(GradientStash&&) noexcept = default;
GradientStash::~GradientStash() = default;

absl::StatusOr<GradientStash> GradientStash::Create(int device,
                                                    int64_t floats) {
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  RS_ASSIGN_OR_RETURN(impl->stash, DeviceBuffer::Create(device, floats));
  RS_ASSIGN_OR_RETURN(impl->blas, OwnedCublasHandle::Create(device));
  // alpha and the scale factor are host values.
  RS_CUBLAS_RETURN_IF_ERROR(
      cublasSetPointerMode(impl->blas.get(), CUBLAS_POINTER_MODE_HOST));
  return GradientStash(std::move(impl));
}

int64_t GradientStash::bytes() const {
  return impl_ == nullptr ? 0 : static_cast<int64_t>(impl_->stash.size()) * 4;
}

absl::Status GradientStash::Add(const float* grads, bool first,
                                CudaStream stream) {
  const int64_t n = static_cast<int64_t>(impl_->stash.size());
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl_->device));
  if (first) {
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        impl_->stash.data(), grads, n * sizeof(float),
        cudaMemcpyDeviceToDevice, reinterpret_cast<cudaStream_t>(stream)));
    return absl::OkStatus();
  }
  RS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(
      impl_->blas.get(), reinterpret_cast<cudaStream_t>(stream)));
  const float one = 1.0f;
  RS_CUBLAS_RETURN_IF_ERROR(cublasSaxpy_64(impl_->blas.get(), n, &one, grads,
                                           1, impl_->stash.data(), 1));
  return absl::OkStatus();
}

absl::Status GradientStash::Fold(float* grads, int64_t offset, int64_t count,
                                 int passes, CudaStream stream) {
  const int64_t size = static_cast<int64_t>(impl_->stash.size());
  if (offset < 0 || count < 0 || offset + count > size || passes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GradientStash::Fold: range [", offset, ", ", offset + count,
        ") outside [0, ", size, ") or passes ", passes, " < 1"));
  }
  if (count == 0) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl_->device));
  const float inverse = 1.0f / static_cast<float>(passes);
  RS_CUDA_RETURN_IF_ERROR(kernels::LaunchFoldStash(
      grads + offset, impl_->stash.data() + offset, count, inverse,
      reinterpret_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

}  // namespace ringside
