// cuda_support.h without --config=cuda: every call says CUDA is not built.
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/cuda_support.h"

namespace ringside {
namespace {

absl::Status NotBuilt() { return BuiltWithoutCudaError("CUDA worker"); }

}  // namespace

bool BuiltWithCuda() { return false; }

absl::Status BuiltWithoutCudaError(absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(what, ": built without CUDA: rebuild with --config=cuda"));
}

absl::Status SetCudaDevice(int) { return NotBuilt(); }
absl::StatusOr<std::string> CudaDeviceName(int) { return NotBuilt(); }
absl::StatusOr<std::string> CudaPciBusId(int) { return NotBuilt(); }

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

absl::StatusOr<OwnedCudaEvent> OwnedCudaEvent::Create(int, bool) {
  return NotBuilt();
}
OwnedCudaEvent::OwnedCudaEvent(OwnedCudaEvent&& other) noexcept
    : device_(other.device_), event_(std::exchange(other.event_, nullptr)) {}
OwnedCudaEvent& OwnedCudaEvent::operator=(OwnedCudaEvent&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(event_, other.event_);
  return *this;
}
OwnedCudaEvent::~OwnedCudaEvent() = default;

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Create(int64_t) {
  return NotBuilt();
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

absl::Status RecordEvent(CudaEvent, CudaStream) { return NotBuilt(); }
absl::Status WaitForEvent(CudaEvent) { return NotBuilt(); }
absl::StatusOr<bool> EventCompleted(CudaEvent) { return NotBuilt(); }
absl::Status StreamWaitEvent(CudaStream, CudaEvent) { return NotBuilt(); }
absl::Status SynchronizeStream(CudaStream) { return NotBuilt(); }
absl::StatusOr<double> EventSeconds(CudaEvent, CudaEvent) { return NotBuilt(); }
absl::Status CopyAsync(float*, const float*, int64_t, CudaStream) {
  return NotBuilt();
}

}  // namespace ringside
