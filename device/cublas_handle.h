// OwnedCublasHandle: one cuBLAS handle on a CUDA device (cublasCreate /
// cublasDestroy), for the CUDA models' matrix products.
//
// Only compiled with --config=cuda (include it from CUDA code only: it
// needs the CUDA headers). Errors carry cuBLAS's own message and our
// file:line (device/cuda_status.h). Move-only and not thread-safe (as a
// cuBLAS handle is); destroying it releases the handle without reporting
// errors. Create makes the device current on the calling thread and leaves
// it so.
#ifndef RINGSIDE_DEVICE_CUBLAS_HANDLE_H_
#define RINGSIDE_DEVICE_CUBLAS_HANDLE_H_

#include <cublas_v2.h>

#include "absl/status/statusor.h"

namespace ringside {

class OwnedCublasHandle {
 public:
  OwnedCublasHandle() = default;
  // A handle on `device`, in cuBLAS's default math mode. Blocking.
  static absl::StatusOr<OwnedCublasHandle> Create(int device);
  OwnedCublasHandle(OwnedCublasHandle&& other) noexcept;
  OwnedCublasHandle& operator=(OwnedCublasHandle&& other) noexcept;
  ~OwnedCublasHandle();
  cublasHandle_t get() const { return handle_; }

 private:
  int device_ = 0;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_CUBLAS_HANDLE_H_
