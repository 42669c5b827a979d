#include "models/cuda/cuda_check.h"

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

absl::StatusCode CublasErrorCode(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return absl::StatusCode::kOk;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return absl::StatusCode::kUnavailable;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::StatusCode::kResourceExhausted;
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::StatusCode::kInvalidArgument;
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status CudaCallStatus(cudaError_t error, absl::string_view what,
                            const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // do not report it again at the next launch check
  return CudaStatus(error, what, file, line);
}

absl::Status CublasStatus(cublasStatus_t status, absl::string_view what,
                          const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::Status(CublasErrorCode(status),
                      absl::StrCat(what, " [", file, ":", line,
                                   "]: ", cublasGetStatusName(status), ": ",
                                   cublasGetStatusString(status)));
}

}  // namespace ringside
