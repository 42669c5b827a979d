// DeviceFusionMemory: the fusion runtime's view of a CUDA worker's gradient
// buffer (collectives/fusion/fusion_memory.h). A tensor is ready once the
// event the model recorded after its gradient kernels has completed
// (cudaEventQuery, SyncContext::grad_ready_event: Horovod's ReadyEvent);
// the fusion buffer is device memory on the worker's GPU, and copies run
// on a stream of its own and are waited for (so the NCCL all-reduce that
// follows on the collective's stream reads final data).
//
// Compiles in every build; without --config=cuda Create fails with
// "built without CUDA". Not thread-safe (the runtime's background thread
// uses it).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_DEVICE_FUSION_MEMORY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_DEVICE_FUSION_MEMORY_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "collectives/fusion/fusion_memory.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "worker/sync_strategy.h"

namespace ringside {

class DeviceFusionMemory final : public FusionMemory {
 public:
  // For a context with device kCuda and grad_ready_event set
  // (INVALID_ARGUMENT otherwise). Blocking (creates the copy stream).
  static absl::StatusOr<std::unique_ptr<DeviceFusionMemory>> Create(
      const SyncContext& context);

  absl::StatusOr<bool> Ready(int index) override;
  absl::StatusOr<absl::Span<float>> Buffer(int64_t floats) override;
  absl::Status Copy(float* dst, const float* src, int64_t floats) override;

 private:
  DeviceFusionMemory(int device, std::function<CudaEvent(int)> ready)
      : device_(device), ready_(std::move(ready)) {}

  const int device_;
  const std::function<CudaEvent(int)> ready_;
  OwnedCudaStream stream_;
  DeviceBuffer buffer_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_DEVICE_FUSION_MEMORY_H_
