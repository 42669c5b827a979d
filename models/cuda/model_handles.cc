#include "models/cuda/model_handles.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/cuda_status.h"

namespace ringside {

absl::Status ModelHandles::Init(int device, int num_tensors) {
  device_ = device;
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

absl::Status ModelHandles::ColumnSums(const float* m, int64_t rows,
                                      int64_t cols, float* out) {
  if (rows <= 0 || cols <= 0) return absl::OkStatus();
  if (rows > INT_MAX || cols > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ColumnSums: ", rows, " x ", cols, " is too large for cuBLAS"));
  }
  if (static_cast<int64_t>(ones_.size()) < rows) {
    RS_ASSIGN_OR_RETURN(ones_, DeviceBuffer::Create(device_, rows));
    RS_RETURN_IF_ERROR(
        CopyToDevice(std::vector<float>(rows, 1.0f), ones_.data()));
  }
  // Row-major rows x cols is column-major cols x rows (leading dimension
  // cols): out = that matrix times the ones.
  const float one = 1.0f;
  const float zero = 0.0f;
  RS_CUBLAS_RETURN_IF_ERROR(
      cublasSgemv(cublas_.get(), CUBLAS_OP_N, static_cast<int>(cols),
                  static_cast<int>(rows), &one, m, static_cast<int>(cols),
                  ones_.data(), 1, &zero, out, 1));
  return absl::OkStatus();
}

}  // namespace ringside
