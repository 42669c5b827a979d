#include "models/cuda/model_handles.h"

#include <cstdio>
#include <cstdlib>

#include "models/cuda/cuda_check.h"

namespace ringside {

ModelHandles::~ModelHandles() {
  if (cudaSetDevice(device_) != cudaSuccess) cudaGetLastError();
  for (cudaEvent_t e : ready_) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  cudaGetLastError();
}

absl::Status ModelHandles::Init(int device, int num_tensors) {
  device_ = device;
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  RS_CUBLAS_RETURN_IF_ERROR(cublasCreate(&cublas_));
  // Full float32 products, so results match the CPU model.
  RS_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  ready_.assign(num_tensors, nullptr);
  for (cudaEvent_t& e : ready_) {
    RS_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  RS_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start_));
  RS_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop_));
  return absl::OkStatus();
}

cudaEvent_t ModelHandles::ready(int tensor) const {
  if (tensor < 0 || tensor >= static_cast<int>(ready_.size())) {
    std::fprintf(stderr, "CUDA model: no readiness event for tensor %d\n",
                 tensor);
    std::abort();
  }
  return ready_[tensor];
}

absl::StatusOr<double> ModelHandles::ElapsedSeconds() const {
  float ms = 0.0f;
  RS_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
  return ms / 1e3;
}

}  // namespace ringside
