// DeviceBuffer without --config=cuda: nothing can be allocated.
#include "tests/collectives/device_buffer.h"

namespace ringside {
namespace {

absl::Status NotBuilt() {
  return absl::UnimplementedError("DeviceBuffer: built without --config=cuda");
}

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(int, size_t) {
  return NotBuilt();
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept = default;
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::Free() {}
absl::Status DeviceBuffer::Upload(absl::Span<const float>) {
  return NotBuilt();
}
absl::StatusOr<std::vector<float>> DeviceBuffer::Download() const {
  return NotBuilt();
}

}  // namespace ringside
