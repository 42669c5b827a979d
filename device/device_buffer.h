// DeviceBuffer: an RAII array of floats in one CUDA device's memory
// (cudaMalloc / cudaFree), with blocking host <-> device copies that return
// absl::Status carrying CUDA's own message (device/cuda_status.h), e.g.
// RESOURCE_EXHAUSTED "cudaMalloc(...) [device/device_buffer.cc:NN]:
// cudaErrorMemoryAllocation: out of memory". The CUDA models, the CUDA
// trainer, the device fusion memory and the NCCL tests all use it.
//
// Built with --config=cuda this is the real thing; without it Create and the
// copies return UNIMPLEMENTED "DeviceBuffer: built without CUDA: rebuild
// with --config=cuda", so this header needs no CUDA headers and callers
// link everywhere.
//
// Copies and Zero run on the legacy default stream and return once the data
// is in place (they synchronize that stream): they wait for earlier work on
// blocking streams, not for streams created with cudaStreamNonBlocking
// (synchronize those first).
//
// Move-only; the destructor frees the memory (without reporting errors).
// Not thread-safe. Every method that touches memory makes the buffer's
// device current on the calling thread and leaves it so.
#ifndef RINGSIDE_DEVICE_DEVICE_BUFFER_H_
#define RINGSIDE_DEVICE_DEVICE_BUFFER_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ringside {

class DeviceBuffer {
 public:
  // Empty: data() == nullptr, size() == 0.
  DeviceBuffer() = default;

  // `floats` uninitialized floats on CUDA device `device` (0 allocates
  // nothing). Blocking. Errors: CUDA's (RESOURCE_EXHAUSTED when out of
  // memory, UNAVAILABLE without a usable GPU or driver).
  static absl::StatusOr<DeviceBuffer> Create(int device, size_t floats);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Device memory: pass to kernels and CUDA calls, never dereference on the
  // host.
  float* data() const { return data_; }
  size_t size() const { return size_; }
  // The same memory as a span (e.g. for a Collective on device memory).
  absl::Span<float> span() const { return absl::MakeSpan(data_, size_); }
  int device() const { return device_; }

  // Copies `host` into floats [offset, offset + host.size()). Blocking.
  // INVALID_ARGUMENT if that range is outside the buffer.
  absl::Status CopyFromHost(absl::Span<const float> host, size_t offset = 0);
  // Copies floats [offset, offset + host.size()) into `host`. Blocking.
  // INVALID_ARGUMENT if that range is outside the buffer.
  absl::Status CopyToHost(absl::Span<float> host, size_t offset = 0) const;
  // The whole buffer on the host. Blocking.
  absl::StatusOr<std::vector<float>> ToHost() const;
  // Sets every float to 0.0f. Blocking.
  absl::Status Zero();

 private:
  DeviceBuffer(int device, float* data, size_t size)
      : device_(device), data_(data), size_(size) {}
  void Free();

  int device_ = 0;
  float* data_ = nullptr;
  size_t size_ = 0;
};

// Blocking copies between host memory and device memory at a raw pointer
// (e.g. into a model's flat parameter buffer). The pointer must address
// host.size() floats of device memory; anything else is CUDA's error as a
// Status (typically INVALID_ARGUMENT "...: cudaErrorInvalidValue: invalid
// argument"). The current device is not changed.
absl::Status CopyToDevice(absl::Span<const float> host, float* device_dst);
absl::Status CopyToHost(const float* device_src, absl::Span<float> host);
// Sets `floats` floats of device memory at `device_dst` to 0.0f. Blocking.
absl::Status ZeroOnDevice(float* device_dst, size_t floats);

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_DEVICE_BUFFER_H_
