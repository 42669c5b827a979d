// cuda_stream.h on the CUDA runtime (--config=cuda).
#include "device/cuda_stream.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "device/cuda_status.h"

namespace ringside {

absl::StatusOr<OwnedCudaStream> OwnedCudaStream::Create(int device) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  OwnedCudaStream s;
  s.device_ = device;
  RS_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking));
  return s;
}

OwnedCudaStream::OwnedCudaStream(OwnedCudaStream&& other) noexcept
    : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}

OwnedCudaStream& OwnedCudaStream::operator=(OwnedCudaStream&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(stream_, other.stream_);
  return *this;
}

OwnedCudaStream::~OwnedCudaStream() {
  if (stream_ == nullptr) return;
  if (cudaSetDevice(device_) != cudaSuccess ||
      cudaStreamDestroy(stream_) != cudaSuccess) {
    cudaGetLastError();
  }
}

absl::Status StreamWaitEvent(CudaStream stream, CudaEvent event) {
  RS_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, event, 0));
  return absl::OkStatus();
}

absl::Status SynchronizeStream(CudaStream stream) {
  RS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return absl::OkStatus();
}

absl::Status CopyAsync(float* dst, const float* src, int64_t floats,
                       CudaStream stream) {
  if (floats == 0) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, floats * sizeof(float),
                                          cudaMemcpyDefault, stream));
  return absl::OkStatus();
}

}  // namespace ringside
