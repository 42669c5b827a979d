// CUDA runtime and NCCL errors as absl::Status: each error keeps the
// library's own name and message and names our call site (file:line), so a
// failure on a GPU machine reads like
//   "cudaStreamCreate(&stream) [collectives/nccl_collective.cc:212]:
//    cudaErrorMemoryAllocation: out of memory".
// Nothing here needs a GPU: the runtime and NCCL describe their error codes
// without a driver.
//
// Codes: no usable GPU or driver (cudaErrorInsufficientDriver,
// cudaErrorNoDevice, ...) and NCCL system/remote errors -> UNAVAILABLE; out
// of memory -> RESOURCE_EXHAUSTED; bad values, devices or pointers and
// ncclInvalidArgument -> INVALID_ARGUMENT; ncclInvalidUsage ->
// FAILED_PRECONDITION; anything else -> INTERNAL.
//
// Only compiled with --config=cuda (see collectives/BUILD). Thread-safe:
// pure functions (ncclGetLastError reports the last error of the process).
#ifndef RINGSIDE_COLLECTIVES_CUDA_STATUS_H_
#define RINGSIDE_COLLECTIVES_CUDA_STATUS_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringside {

// The absl code for a CUDA runtime error (OK for cudaSuccess).
absl::StatusCode CudaErrorCode(cudaError_t error);
// The absl code for an NCCL result (OK for ncclSuccess).
absl::StatusCode NcclErrorCode(ncclResult_t result);

// OK for cudaSuccess; else "<what> [<file>:<line>]: <cudaGetErrorName>:
// <cudaGetErrorString>". Non-blocking.
absl::Status CudaStatus(cudaError_t error, absl::string_view what,
                        const char* file, int line);

// OK for ncclSuccess; else "<what> [<file>:<line>]: <ncclResult name>:
// <ncclGetErrorString>", followed by "; last NCCL error: <ncclGetLastError>"
// when NCCL has one. `comm` (may be null) is passed to ncclGetLastError.
// ncclInProgress is not an error for non-blocking communicators: callers
// poll it themselves; passed here it reads as INTERNAL. Non-blocking.
absl::Status NcclStatus(ncclResult_t result, absl::string_view what,
                        const char* file, int line, ncclComm_t comm = nullptr);

}  // namespace ringside

// RS_CUDA_STATUS(call): runs the CUDA runtime call, CudaStatus of its result
// with the call's text as `what` and this file and line.
#define RS_CUDA_STATUS(call) \
  ::ringside::CudaStatus((call), #call, __FILE__, __LINE__)
// RS_NCCL_STATUS(call, comm): the same for an NCCL call on `comm`.
#define RS_NCCL_STATUS(call, comm) \
  ::ringside::NcclStatus((call), #call, __FILE__, __LINE__, (comm))

#endif  // RINGSIDE_COLLECTIVES_CUDA_STATUS_H_
