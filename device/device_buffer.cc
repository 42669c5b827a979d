// DeviceBuffer with the CUDA runtime (--config=cuda).
#include "device/device_buffer.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "device/cuda_status.h"

namespace ringside {
namespace {

absl::Status CheckRange(const char* what, size_t offset, size_t count,
                        size_t size) {
  if (offset > size || count > size - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeviceBuffer::", what, ": floats [", offset, ", ",
                     offset + count, ") outside a buffer of ", size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(int device, size_t floats) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  void* data = nullptr;
  if (floats > 0) {
    RS_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, floats * sizeof(float)));
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
  // Errors here (a poisoned context) have no one to go to; clear them.
  if (cudaSetDevice(device_) != cudaSuccess || cudaFree(data_) != cudaSuccess) {
    cudaGetLastError();
  }
  data_ = nullptr;
  size_ = 0;
}

absl::Status DeviceBuffer::CopyFromHost(absl::Span<const float> host,
                                        size_t offset) {
  RS_RETURN_IF_ERROR(CheckRange("CopyFromHost", offset, host.size(), size_));
  if (host.empty()) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return CopyToDevice(host, data_ + offset);
}

absl::Status DeviceBuffer::CopyToHost(absl::Span<float> host,
                                      size_t offset) const {
  RS_RETURN_IF_ERROR(CheckRange("CopyToHost", offset, host.size(), size_));
  if (host.empty()) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return ::ringside::CopyToHost(data_ + offset, host);
}

absl::StatusOr<std::vector<float>> DeviceBuffer::ToHost() const {
  std::vector<float> host(size_);
  RS_RETURN_IF_ERROR(CopyToHost(absl::MakeSpan(host)));
  return host;
}

absl::Status DeviceBuffer::Zero() {
  if (size_ == 0) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return ZeroOnDevice(data_, size_);
}

absl::Status ZeroOnDevice(float* device_dst, size_t floats) {
  if (floats == 0) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaMemset(device_dst, 0, floats * sizeof(float)));
  RS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamLegacy));
  return absl::OkStatus();
}

absl::Status CopyToDevice(absl::Span<const float> host, float* device_dst) {
  if (host.empty()) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaMemcpy(device_dst, host.data(),
                                     host.size() * sizeof(float),
                                     cudaMemcpyHostToDevice));
  // cudaMemcpy from pageable memory may return before the DMA lands.
  RS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamLegacy));
  return absl::OkStatus();
}

absl::Status CopyToHost(const float* device_src, absl::Span<float> host) {
  if (host.empty()) return absl::OkStatus();
  RS_CUDA_RETURN_IF_ERROR(cudaMemcpy(host.data(), device_src,
                                     host.size() * sizeof(float),
                                     cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

}  // namespace ringside
