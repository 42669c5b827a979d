// GradientStash: the running sum of a step's gradients over the passes of
// gradient accumulation, in device memory, next to the model's gradient
// buffer (worker/cuda_backend.h). Every operation is queued on the given
// stream, after the kernels that wrote the gradients.
//
// The arithmetic is the host's (worker/host_backend.cc), so a CUDA worker
// rounds as a CPU worker does: Add sets stash = g on the first pass and
// stash = g + stash after it (cuBLAS saxpy with alpha 1: one rounding);
// Fold sets g = (g + stash) * (1 / passes), the sum rounded, then the
// product, in one kernel a call (device/gradient_fold_kernel.h).
//
// Compiles in every build; without --config=cuda Create answers "built
// without CUDA". Move-only; not thread-safe.
#ifndef RINGSIDE_DEVICE_GRADIENT_STASH_H_
#define RINGSIDE_DEVICE_GRADIENT_STASH_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cuda_handles.h"

namespace ringside {

class GradientStash {
 public:
  // A stash of `floats` elements on `device`.
  static absl::StatusOr<GradientStash> Create(int device, int64_t floats);
  GradientStash(GradientStash&&) noexcept;
  GradientStash& operator=(GradientStash&&) noexcept;
  ~GradientStash();

  // The stash takes the gradients `grads` (all `floats` of them): a copy
  // when `first`, else added in.
  absl::Status Add(const float* grads, bool first, CudaStream stream);
  // grads[offset, offset + count) = (grads + stash) * (1 / passes) there.
  absl::Status Fold(float* grads, int64_t offset, int64_t count, int passes,
                    CudaStream stream);
  int64_t bytes() const;

 private:
  struct Impl;
  explicit GradientStash(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_GRADIENT_STASH_H_
