// CUDA runtime and cuBLAS calls as absl::Status for the CUDA models, in the
// format and code mapping of collectives/cuda_status.h:
//   "cudaMalloc(&data, bytes) [models/cuda/device_buffer.cc:40]:
//    cudaErrorMemoryAllocation: out of memory".
// A failed runtime call also stays behind as the thread's "last error",
// which the next kernel-launch check (cudaGetLastError) would report again;
// CudaCallStatus clears it (sticky errors, which poison the context, stay).
//
// cuBLAS codes: NOT_INITIALIZED (no usable GPU or driver) -> UNAVAILABLE;
// ALLOC_FAILED -> RESOURCE_EXHAUSTED; INVALID_VALUE -> INVALID_ARGUMENT;
// ARCH_MISMATCH, NOT_SUPPORTED -> FAILED_PRECONDITION; others -> INTERNAL.
//
// Only compiled with --config=cuda (include it from CUDA code only).
// Thread-safe: pure functions of their arguments (and the thread's CUDA
// last error).
#ifndef RINGSIDE_MODELS_CUDA_CUDA_CHECK_H_
#define RINGSIDE_MODELS_CUDA_CUDA_CHECK_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collectives/cuda_status.h"
#include "common/status_macros.h"

namespace ringside {

// CudaStatus (collectives/cuda_status.h), and on error clears the thread's
// CUDA last error. Non-blocking.
absl::Status CudaCallStatus(cudaError_t error, absl::string_view what,
                            const char* file, int line);

// OK for CUBLAS_STATUS_SUCCESS; else "<what> [<file>:<line>]:
// <cublasGetStatusName>: <cublasGetStatusString>". Non-blocking.
absl::Status CublasStatus(cublasStatus_t status, absl::string_view what,
                          const char* file, int line);

}  // namespace ringside

// Runs a CUDA runtime call; returns its error as a Status from the caller.
#define RS_CUDA_RETURN_IF_ERROR(call) \
  RS_RETURN_IF_ERROR(                 \
      ::ringside::CudaCallStatus((call), #call, __FILE__, __LINE__))
// Runs a cuBLAS call; returns its error as a Status from the caller.
#define RS_CUBLAS_RETURN_IF_ERROR(call) \
  RS_RETURN_IF_ERROR(                   \
      ::ringside::CublasStatus((call), #call, __FILE__, __LINE__))

#endif  // RINGSIDE_MODELS_CUDA_CUDA_CHECK_H_
