#include "models/cuda/model_handles.h"

#include <cstdio>
#include <cstdlib>

#include "device/cuda_status.h"

namespace ringside {

absl::Status ModelHandles::Init(int device, int num_tensors) {
  RS_ASSIGN_OR_RETURN(cublas_, OwnedCublasHandle::Create(device));
  // Full float32 products, so results match the CPU model.
  RS_CUBLAS_RETURN_IF_ERROR(
      cublasSetMathMode(cublas_.get(), CUBLAS_DEFAULT_MATH));
  ready_.resize(num_tensors);
  for (OwnedCudaEvent& e : ready_) {
    RS_ASSIGN_OR_RETURN(e, OwnedCudaEvent::Create(device, /*timing=*/false));
  }
  RS_ASSIGN_OR_RETURN(start_, OwnedCudaEvent::Create(device, /*timing=*/true));
  RS_ASSIGN_OR_RETURN(stop_, OwnedCudaEvent::Create(device, /*timing=*/true));
  return absl::OkStatus();
}

cudaEvent_t ModelHandles::ready(int tensor) const {
  if (tensor < 0 || tensor >= static_cast<int>(ready_.size())) {
    std::fprintf(stderr, "CUDA model: no readiness event for tensor %d\n",
                 tensor);
    std::abort();
  }
  return ready_[tensor].get();
}

absl::StatusOr<double> ModelHandles::ElapsedSeconds() const {
  return EventSeconds(start_.get(), stop_.get());
}

}  // namespace ringside
