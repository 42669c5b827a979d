// PinnedHostBuffer: floats in page-locked host memory (cudaHostAlloc), so
// that device <-> host copies on a stream are truly asynchronous (the
// CUDA worker's host staging).
//
// Built with --config=cuda this is the CUDA runtime
// (pinned_host_buffer.cc); without it Create returns UNIMPLEMENTED "pinned
// host memory: built without CUDA: rebuild with --config=cuda"
// (pinned_host_buffer_stub.cc). Errors otherwise carry CUDA's own message
// and our file:line (device/cuda_status.h).
//
// Move-only and not thread-safe; the destructor frees the memory without
// reporting errors.
#ifndef RINGSIDE_DEVICE_PINNED_HOST_BUFFER_H_
#define RINGSIDE_DEVICE_PINNED_HOST_BUFFER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ringside {

class PinnedHostBuffer {
 public:
  // Empty: span() is empty.
  PinnedHostBuffer() = default;
  // `floats` floats, zeroed (<= 0 allocates nothing). Blocking.
  static absl::StatusOr<PinnedHostBuffer> Create(int64_t floats);
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  ~PinnedHostBuffer();
  absl::Span<float> span() const { return absl::MakeSpan(data_, size_); }

 private:
  float* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_PINNED_HOST_BUFFER_H_
