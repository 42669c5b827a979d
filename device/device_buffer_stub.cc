// DeviceBuffer without --config=cuda: nothing can be allocated or copied.
#include "device/cuda_device.h"
#include "device/device_buffer.h"

namespace ringside {
namespace {

absl::Status NotBuilt() { return BuiltWithoutCudaError("DeviceBuffer"); }

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(int, size_t) {
  return NotBuilt();
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept = default;
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::Free() {}
absl::Status DeviceBuffer::CopyFromHost(absl::Span<const float>, size_t) {
  return NotBuilt();
}
absl::Status DeviceBuffer::CopyToHost(absl::Span<float>, size_t) const {
  return NotBuilt();
}
absl::StatusOr<std::vector<float>> DeviceBuffer::ToHost() const {
  return NotBuilt();
}
absl::Status DeviceBuffer::Zero() { return NotBuilt(); }
absl::Status CopyToDevice(absl::Span<const float>, float*) {
  return NotBuilt();
}
absl::Status CopyToHost(const float*, absl::Span<float>) { return NotBuilt(); }
absl::Status ZeroOnDevice(float*, size_t) { return NotBuilt(); }

}  // namespace ringside
