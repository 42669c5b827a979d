// ModelHandles: the CUDA handles every model on a GPU keeps (CudaMlp,
// CudaCharLm), owned through the device layer (device/): a cuBLAS handle in
// full float32 math (no TF32, so products match the CPU models), one
// readiness event per gradient tensor (timing disabled;
// CudaModel::grad_ready_event) and a start/stop event pair that times a
// step's kernels (CudaModel::last_compute_seconds); and the column sums of
// a row-major matrix (a bias gradient) as one cuBLAS matrix-vector product
// against a vector of ones, which reads the matrix at memory speed where a
// hand-written per-column kernel left most of the GPU idle.
//
// Init creates them on `device`; the destructor releases whatever was
// created and clears release errors (a poisoned context has no one to
// report to). CUDA code only (needs the CUDA headers; compiled with
// --config=cuda). Thread-compatible.
#ifndef RINGSIDE_MODELS_CUDA_MODEL_HANDLES_H_
#define RINGSIDE_MODELS_CUDA_MODEL_HANDLES_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cublas_handle.h"
#include "device/cuda_event.h"
#include "device/device_buffer.h"

namespace ringside {

class ModelHandles {
 public:
  ModelHandles() = default;
  ModelHandles(const ModelHandles&) = delete;
  ModelHandles& operator=(const ModelHandles&) = delete;

  // Once, before any other call. CUDA/cuBLAS errors with their message.
  absl::Status Init(int device, int num_tensors);

  cublasHandle_t cublas() const { return cublas_.get(); }
  // Gradient `tensor`'s readiness event; aborts, naming the tensor, when it
  // is not in [0, num_tensors).
  cudaEvent_t ready(int tensor) const;
  cudaEvent_t start() const { return start_.get(); }
  cudaEvent_t stop() const { return stop_.get(); }
  // Seconds between start() and stop(); both must have completed.
  absl::StatusOr<double> ElapsedSeconds() const;
  // out[c] = sum over r of m[r][c] for a rows x cols row-major m, on the
  // stream cuBLAS is bound to (cublasSetStream). Grows the ones vector
  // (blocking, once per larger `rows`). Deterministic: cuBLAS's gemv
  // without atomics.
  absl::Status ColumnSums(const float* m, int64_t rows, int64_t cols,
                          float* out);

 private:
  OwnedCublasHandle cublas_;
  std::vector<OwnedCudaEvent> ready_;  // per tensor
  OwnedCudaEvent start_;
  OwnedCudaEvent stop_;
  int device_ = 0;
  DeviceBuffer ones_;  // ColumnSums' vector of ones
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_MODEL_HANDLES_H_
