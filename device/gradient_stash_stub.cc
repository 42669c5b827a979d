// GradientStash without --config=cuda: nothing can be allocated.
#include "device/cuda_device.h"
#include "device/gradient_stash.h"

namespace ringside {

struct GradientStash::Impl {};

GradientStash::GradientStash(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
GradientStash::GradientStash(GradientStash&&) noexcept = default;
GradientStash& GradientStash::operator=(GradientStash&&) noexcept = default;
GradientStash::~GradientStash() = default;

absl::StatusOr<GradientStash> GradientStash::Create(int, int64_t) {
  return BuiltWithoutCudaError("GradientStash");
}
absl::Status GradientStash::Add(const float*, bool, CudaStream) {
  return BuiltWithoutCudaError("GradientStash");
}
absl::Status GradientStash::Fold(float*, int64_t, int64_t, int, CudaStream) {
  return BuiltWithoutCudaError("GradientStash");
}
int64_t GradientStash::bytes() const { return 0; }

}  // namespace ringside
