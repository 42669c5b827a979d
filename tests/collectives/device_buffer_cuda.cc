// DeviceBuffer with the CUDA runtime (--config=cuda).
#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "collectives/cuda_status.h"
#include "tests/collectives/device_buffer.h"

namespace ringside {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(int device, size_t floats) {
  absl::Status s = RS_CUDA_STATUS(cudaSetDevice(device));
  if (!s.ok()) return s;
  void* data = nullptr;
  if (floats > 0) {
    s = RS_CUDA_STATUS(cudaMalloc(&data, floats * sizeof(float)));
    if (!s.ok()) return s;
  }
  return DeviceBuffer(device, static_cast<float*>(data), floats);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(other.device_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

void DeviceBuffer::Free() {
  if (data_ == nullptr) return;
  cudaSetDevice(device_);
  cudaFree(data_);
  data_ = nullptr;
}

absl::Status DeviceBuffer::Upload(absl::Span<const float> host) {
  if (host.size() != size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Upload: ", host.size(), " floats into ", size_));
  }
  if (size_ == 0) return absl::OkStatus();
  absl::Status s = RS_CUDA_STATUS(cudaSetDevice(device_));
  if (!s.ok()) return s;
  return RS_CUDA_STATUS(cudaMemcpy(data_, host.data(), size_ * sizeof(float),
                                   cudaMemcpyHostToDevice));
}

absl::StatusOr<std::vector<float>> DeviceBuffer::Download() const {
  std::vector<float> host(size_);
  if (size_ == 0) return host;
  absl::Status s = RS_CUDA_STATUS(cudaSetDevice(device_));
  if (!s.ok()) return s;
  s = RS_CUDA_STATUS(cudaMemcpy(host.data(), data_, size_ * sizeof(float),
                                cudaMemcpyDeviceToHost));
  if (!s.ok()) return s;
  return host;
}

}  // namespace ringside
