// FusionMemory: how the fusion runtime (fusion_runtime.h) touches the memory
// its gradients live in, so one runtime serves host and device buffers.
//
//   Ready(i)      may tensor i, already Enqueue()d, be submitted for
//                 reduction? Host gradients are final when enqueued; a CUDA
//                 gradient is final when the event recorded after its kernels
//                 has completed (Horovod's ReadyEvent): until then the
//                 runtime keeps it back and asks again next cycle.
//   Buffer(n)     the fusion buffer, in the gradients' memory.
//   Copy(d, s, n) a copy between the gradient buffer and the fusion buffer.
//
// HostFusionMemory is the runtime's default (host memory: always ready, a
// std::vector buffer, std::memcpy). The CUDA worker's implementation is
// worker/strategies/allreduce/device_fusion_memory.h.
//
// Thread-safety: the runtime calls an instance from its background thread
// only; an implementation need not be thread-safe.
#ifndef RINGSIDE_COLLECTIVES_FUSION_FUSION_MEMORY_H_
#define RINGSIDE_COLLECTIVES_FUSION_FUSION_MEMORY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ringside {

class FusionMemory {
 public:
  virtual ~FusionMemory() = default;

  // Whether tensor `index`'s gradient is final (its producer has finished
  // writing it). Non-blocking. An error stops the runtime.
  virtual absl::StatusOr<bool> Ready(int index) = 0;

  // A buffer of at least `floats` floats, of the same memory kind as the
  // gradients; valid until the next call or destruction (growing it may
  // drop its contents). Blocking.
  virtual absl::StatusOr<absl::Span<float>> Buffer(int64_t floats) = 0;

  // Copies `floats` floats from `src` to `dst` (gradient or fusion buffer
  // memory; they do not overlap). Blocking: the data is in place on return.
  virtual absl::Status Copy(float* dst, const float* src, int64_t floats) = 0;
};

// Host memory: Ready is always true, the buffer a std::vector, Copy
// std::memcpy.
class HostFusionMemory final : public FusionMemory {
 public:
  absl::StatusOr<bool> Ready(int) override { return true; }
  absl::StatusOr<absl::Span<float>> Buffer(int64_t floats) override;
  absl::Status Copy(float* dst, const float* src, int64_t floats) override;

 private:
  std::vector<float> buffer_;  // grown on first use, then kept
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_FUSION_MEMORY_H_
