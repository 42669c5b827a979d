// MappedDeviceBuffer without --config=cuda: nothing can be mapped.
#include "device/cuda_device.h"
#include "device/mapped_device_buffer.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> MappedDeviceBuffer::Create(
    int, size_t) {
  return BuiltWithoutCudaError("MappedDeviceBuffer");
}

}  // namespace ringside
