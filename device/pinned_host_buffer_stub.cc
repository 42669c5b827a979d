// PinnedHostBuffer without --config=cuda: nothing can be allocated.
#include <utility>

#include "device/cuda_device.h"
#include "device/pinned_host_buffer.h"

namespace ringside {

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Create(int64_t) {
  return BuiltWithoutCudaError("pinned host memory");
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
PinnedHostBuffer::~PinnedHostBuffer() = default;

}  // namespace ringside
