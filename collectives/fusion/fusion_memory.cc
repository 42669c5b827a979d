#include "collectives/fusion/fusion_memory.h"

#include <cstring>

namespace ringside {

absl::StatusOr<absl::Span<float>> HostFusionMemory::Buffer(int64_t floats) {
  if (static_cast<int64_t>(buffer_.size()) < floats) buffer_.resize(floats);
  return absl::MakeSpan(buffer_);
}

absl::Status HostFusionMemory::Copy(float* dst, const float* src,
                                    int64_t floats) {
  std::memcpy(dst, src, floats * sizeof(float));
  return absl::OkStatus();
}

}  // namespace ringside
