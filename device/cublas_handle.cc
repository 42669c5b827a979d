#include "device/cublas_handle.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "device/cuda_status.h"

namespace ringside {

absl::StatusOr<OwnedCublasHandle> OwnedCublasHandle::Create(int device) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  OwnedCublasHandle h;
  h.device_ = device;
  RS_CUBLAS_RETURN_IF_ERROR(cublasCreate(&h.handle_));
  return h;
}

OwnedCublasHandle::OwnedCublasHandle(OwnedCublasHandle&& other) noexcept
    : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}

OwnedCublasHandle& OwnedCublasHandle::operator=(
    OwnedCublasHandle&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(handle_, other.handle_);
  return *this;
}

OwnedCublasHandle::~OwnedCublasHandle() {
  if (handle_ == nullptr) return;
  // Errors here (a poisoned context) have no one to go to; clear them.
  cudaSetDevice(device_);
  cublasDestroy(handle_);
  cudaGetLastError();
}

}  // namespace ringside
