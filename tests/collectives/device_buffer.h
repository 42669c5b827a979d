// DeviceBuffer: floats in one CUDA device's memory, for tests of the NCCL
// backend, whose spans are device memory. Built with --config=cuda it
// allocates with cudaMalloc; without it Create returns UNIMPLEMENTED (the
// tests skip before they get here), so test sources need no CUDA headers.
//
// Move-only; frees its memory on destruction. Not thread-safe; each method
// makes the buffer's device current on the calling thread. Copies are
// synchronous (cudaMemcpy), so they see the result of a finished
// Collective call.
#ifndef RINGSIDE_TESTS_COLLECTIVES_DEVICE_BUFFER_H_
#define RINGSIDE_TESTS_COLLECTIVES_DEVICE_BUFFER_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ringside {

class DeviceBuffer {
 public:
  // `floats` uninitialized floats on CUDA device `device`. Blocking.
  static absl::StatusOr<DeviceBuffer> Create(int device, size_t floats);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  // The device memory (not dereferenceable on the host).
  absl::Span<float> span() const { return absl::MakeSpan(data_, size_); }
  // Copies host.size() == size() floats to the device.
  absl::Status Upload(absl::Span<const float> host);
  // Copies the buffer back to the host.
  absl::StatusOr<std::vector<float>> Download() const;

 private:
  DeviceBuffer(int device, float* data, size_t size)
      : device_(device), data_(data), size_(size) {}
  void Free();

  int device_ = 0;
  float* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_TESTS_COLLECTIVES_DEVICE_BUFFER_H_
