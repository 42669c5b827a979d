// PinnedHostBuffer with the CUDA runtime (--config=cuda).
#include "device/pinned_host_buffer.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>

#include "device/cuda_status.h"

namespace ringside {

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Create(int64_t floats) {
  PinnedHostBuffer b;
  if (floats <= 0) return b;
  void* p = nullptr;
  RS_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&p, floats * sizeof(float), cudaHostAllocDefault));
  std::memset(p, 0, floats * sizeof(float));
  b.data_ = static_cast<float*>(p);
  b.size_ = floats;
  return b;
}

PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

PinnedHostBuffer& PinnedHostBuffer::operator=(
    PinnedHostBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (data_ != nullptr && cudaFreeHost(data_) != cudaSuccess) {
    cudaGetLastError();
  }
}

}  // namespace ringside
