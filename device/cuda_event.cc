// cuda_event.h on the CUDA runtime (--config=cuda).
#include "device/cuda_event.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "device/cuda_status.h"

namespace ringside {

absl::StatusOr<OwnedCudaEvent> OwnedCudaEvent::Create(int device, bool timing) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  OwnedCudaEvent e;
  e.device_ = device;
  RS_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(
      &e.event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

OwnedCudaEvent::OwnedCudaEvent(OwnedCudaEvent&& other) noexcept
    : device_(other.device_), event_(std::exchange(other.event_, nullptr)) {}

OwnedCudaEvent& OwnedCudaEvent::operator=(OwnedCudaEvent&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(event_, other.event_);
  return *this;
}

OwnedCudaEvent::~OwnedCudaEvent() {
  if (event_ == nullptr) return;
  if (cudaSetDevice(device_) != cudaSuccess ||
      cudaEventDestroy(event_) != cudaSuccess) {
    cudaGetLastError();
  }
}

absl::Status RecordEvent(CudaEvent event, CudaStream stream) {
  RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(event, stream));
  return absl::OkStatus();
}

absl::Status WaitForEvent(CudaEvent event) {
  RS_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(event));
  return absl::OkStatus();
}

absl::StatusOr<bool> EventCompleted(CudaEvent event) {
  const cudaError_t e = cudaEventQuery(event);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it
    return false;
  }
  RS_CUDA_RETURN_IF_ERROR(e);
  return true;
}

absl::StatusOr<double> EventSeconds(CudaEvent start, CudaEvent stop) {
  float ms = 0.0f;
  RS_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));
  return ms / 1e3;
}

}  // namespace ringside
