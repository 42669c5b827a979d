#include "device/cuda_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

const char* NcclResultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult";
  }
}

}  // namespace

absl::StatusCode CudaErrorCode(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return absl::StatusCode::kOk;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
      return absl::StatusCode::kUnavailable;
    case cudaErrorMemoryAllocation:
      return absl::StatusCode::kResourceExhausted;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

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

absl::StatusCode NcclErrorCode(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return absl::StatusCode::kOk;
    case ncclSystemError:
    case ncclRemoteError:
      return absl::StatusCode::kUnavailable;
    case ncclInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
    case ncclInvalidUsage:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status CudaStatus(cudaError_t error, absl::string_view what,
                        const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::Status(
      CudaErrorCode(error),
      absl::StrCat(what, " [", file, ":", line, "]: ", cudaGetErrorName(error),
                   ": ", cudaGetErrorString(error)));
}

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

absl::Status NcclStatus(ncclResult_t result, absl::string_view what,
                        const char* file, int line, ncclComm_t comm) {
  if (result == ncclSuccess) return absl::OkStatus();
  std::string message =
      absl::StrCat(what, " [", file, ":", line, "]: ", NcclResultName(result),
                   ": ", ncclGetErrorString(result));
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') {
    absl::StrAppend(&message, "; last NCCL error: ", last);
  }
  return absl::Status(NcclErrorCode(result), message);
}

}  // namespace ringside
