#include "worker/strategies/allreduce/device_fusion_memory.h"

#include "common/status_macros.h"
#include "device/cuda_device.h"
#include "device/cuda_event.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<DeviceFusionMemory>> DeviceFusionMemory::Create(
    const SyncContext& context) {
  if (context.device != Device::kCuda || !context.grad_ready_event) {
    return absl::InvalidArgumentError(
        "DeviceFusionMemory needs a CUDA SyncContext with grad_ready_event");
  }
  std::unique_ptr<DeviceFusionMemory> memory(
      new DeviceFusionMemory(context.cuda_device, context.grad_ready_event));
  RS_ASSIGN_OR_RETURN(memory->stream_,
                      OwnedCudaStream::Create(context.cuda_device));
  return memory;
}

absl::StatusOr<bool> DeviceFusionMemory::Ready(int index) {
  return EventCompleted(ready_(index));
}

absl::StatusOr<absl::Span<float>> DeviceFusionMemory::Buffer(int64_t floats) {
  if (static_cast<int64_t>(buffer_.size()) < floats) {
    buffer_ = DeviceBuffer();  // free the old one first
    RS_ASSIGN_OR_RETURN(buffer_, DeviceBuffer::Create(device_, floats));
  }
  return absl::MakeSpan(buffer_.data(), buffer_.size());
}

absl::Status DeviceFusionMemory::Copy(float* dst, const float* src,
                                      int64_t floats) {
  RS_RETURN_IF_ERROR(SetCudaDevice(device_));
  RS_RETURN_IF_ERROR(CopyAsync(dst, src, floats, stream_.get()));
  return SynchronizeStream(stream_.get());
}

}  // namespace ringside
