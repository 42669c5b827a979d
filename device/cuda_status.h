// CUDA runtime, cuBLAS and NCCL errors as absl::Status: the one way device
// code turns a library error into a Status. Each error keeps the library's
// own name and message and names our call site (file:line), so a failure
// on a GPU machine reads like
//   "cudaMalloc(&data, bytes) [device/device_buffer.cc:30]:
//    cudaErrorMemoryAllocation: out of memory".
// Nothing here needs a GPU: the libraries describe their error codes
// without a driver.
//
// Codes: no usable GPU or driver (cudaErrorInsufficientDriver,
// cudaErrorNoDevice, ..., CUBLAS_STATUS_NOT_INITIALIZED) and NCCL
// system/remote errors -> UNAVAILABLE; out of memory (and
// CUBLAS_STATUS_ALLOC_FAILED) -> RESOURCE_EXHAUSTED; bad values, devices or
// pointers, CUBLAS_STATUS_INVALID_VALUE and ncclInvalidArgument ->
// INVALID_ARGUMENT; ncclInvalidUsage, CUBLAS_STATUS_ARCH_MISMATCH and
// NOT_SUPPORTED -> FAILED_PRECONDITION; anything else -> INTERNAL.
//
// The macros are the one family for calls: RS_<LIB>_STATUS(call) is the
// call's Status, RS_<LIB>_RETURN_IF_ERROR(call) returns it from the caller
// when it is an error. A failed CUDA runtime call also stays behind as the
// thread's "last error", which the next kernel-launch check
// (cudaGetLastError) would report again; the CUDA macros clear it (sticky
// errors, which poison the context, stay).
//
// Only compiled with --config=cuda (include it from CUDA code only: it
// needs the CUDA headers). Thread-safe: pure functions of their arguments
// (and the thread's CUDA last error; ncclGetLastError reports the last
// error of the process).
#ifndef RINGSIDE_DEVICE_CUDA_STATUS_H_
#define RINGSIDE_DEVICE_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace ringside {

// The absl code for a CUDA runtime error (OK for cudaSuccess).
absl::StatusCode CudaErrorCode(cudaError_t error);
// The absl code for a cuBLAS status (OK for CUBLAS_STATUS_SUCCESS).
absl::StatusCode CublasErrorCode(cublasStatus_t status);
// The absl code for an NCCL result (OK for ncclSuccess).
absl::StatusCode NcclErrorCode(ncclResult_t result);

// OK for cudaSuccess; else "<what> [<file>:<line>]: <cudaGetErrorName>:
// <cudaGetErrorString>". Does not touch the thread's last error.
// Non-blocking.
absl::Status CudaStatus(cudaError_t error, absl::string_view what,
                        const char* file, int line);

// CudaStatus, and on error clears the thread's CUDA last error (what
// RS_CUDA_STATUS calls). Non-blocking.
absl::Status CudaCallStatus(cudaError_t error, absl::string_view what,
                            const char* file, int line);

// OK for CUBLAS_STATUS_SUCCESS; else "<what> [<file>:<line>]:
// <cublasGetStatusName>: <cublasGetStatusString>". Non-blocking.
absl::Status CublasStatus(cublasStatus_t status, absl::string_view what,
                          const char* file, int line);

// OK for ncclSuccess; else "<what> [<file>:<line>]: <ncclResult name>:
// <ncclGetErrorString>", followed by "; last NCCL error: <ncclGetLastError>"
// when NCCL has one. `comm` (may be null) is passed to ncclGetLastError.
// ncclInProgress is not an error for non-blocking communicators: callers
// poll it themselves; passed here it reads as INTERNAL. Non-blocking.
absl::Status NcclStatus(ncclResult_t result, absl::string_view what,
                        const char* file, int line, ncclComm_t comm = nullptr);

}  // namespace ringside

// RS_CUDA_STATUS(call): runs the CUDA runtime call; CudaCallStatus of its
// result, with the call's text as `what` and this file and line.
#define RS_CUDA_STATUS(call) \
  ::ringside::CudaCallStatus((call), #call, __FILE__, __LINE__)
// RS_CUBLAS_STATUS(call): the same for a cuBLAS call.
#define RS_CUBLAS_STATUS(call) \
  ::ringside::CublasStatus((call), #call, __FILE__, __LINE__)
// RS_NCCL_STATUS(call, comm): the same for an NCCL call on `comm`.
#define RS_NCCL_STATUS(call, comm) \
  ::ringside::NcclStatus((call), #call, __FILE__, __LINE__, (comm))

// Run the call; return its error as a Status from the caller. (Spelled
// out, not through RS_<LIB>_STATUS, so that #call is the text as written,
// before macros in it such as cudaStreamLegacy expand.)
#define RS_CUDA_RETURN_IF_ERROR(call) \
  RS_RETURN_IF_ERROR(                 \
      ::ringside::CudaCallStatus((call), #call, __FILE__, __LINE__))
#define RS_CUBLAS_RETURN_IF_ERROR(call) \
  RS_RETURN_IF_ERROR(                   \
      ::ringside::CublasStatus((call), #call, __FILE__, __LINE__))

#endif  // RINGSIDE_DEVICE_CUDA_STATUS_H_
