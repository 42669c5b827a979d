// cuda_stream.h without --config=cuda: every call says CUDA is not built.
#include <utility>

#include "device/cuda_device.h"
#include "device/cuda_stream.h"

namespace ringside {
namespace {

absl::Status NotBuilt() { return BuiltWithoutCudaError("CUDA stream"); }

}  // namespace

absl::StatusOr<OwnedCudaStream> OwnedCudaStream::Create(int) {
  return NotBuilt();
}
OwnedCudaStream::OwnedCudaStream(OwnedCudaStream&& other) noexcept
    : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}
OwnedCudaStream& OwnedCudaStream::operator=(OwnedCudaStream&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(stream_, other.stream_);
  return *this;
}
OwnedCudaStream::~OwnedCudaStream() = default;

absl::Status StreamWaitEvent(CudaStream, CudaEvent) { return NotBuilt(); }
absl::Status SynchronizeStream(CudaStream) { return NotBuilt(); }
absl::Status CopyAsync(float*, const float*, int64_t, CudaStream) {
  return NotBuilt();
}

}  // namespace ringside
