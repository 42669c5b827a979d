// cuda_event.h without --config=cuda: every call says CUDA is not built.
#include <utility>

#include "device/cuda_device.h"
#include "device/cuda_event.h"

namespace ringside {
namespace {

absl::Status NotBuilt() { return BuiltWithoutCudaError("CUDA event"); }

}  // namespace

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

absl::Status RecordEvent(CudaEvent, CudaStream) { return NotBuilt(); }
absl::Status WaitForEvent(CudaEvent) { return NotBuilt(); }
absl::StatusOr<bool> EventCompleted(CudaEvent) { return NotBuilt(); }
absl::StatusOr<double> EventSeconds(CudaEvent, CudaEvent) { return NotBuilt(); }

}  // namespace ringside
