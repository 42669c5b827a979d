// CUDA runtime pieces of the CUDA worker path (streams, events, pinned host
// memory, asynchronous copies, device facts) as absl::Status, for code that
// must compile without CUDA's headers: the CUDA trainer, host staging, the
// device fusion memory and the strategies' device paths include this header
// in every build.
//
// Built with --config=cuda this is the CUDA runtime (cuda_support.cc);
// without it BuiltWithCuda() is false and every call returns UNIMPLEMENTED
// "built without CUDA: rebuild with --config=cuda" (cuda_support_stub.cc).
// Errors otherwise carry CUDA's own message and our file:line
// (collectives/cuda_status.h).
//
// Thread-safety: the free functions are thread-safe (as the CUDA runtime
// is). The owning classes are move-only and not thread-safe; destroying one
// releases its handle without reporting errors. Calls that name a device
// make it current on the calling thread and leave it so.
#ifndef RINGSIDE_WORKER_CUDA_SUPPORT_H_
#define RINGSIDE_WORKER_CUDA_SUPPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "models/cuda/cuda_handles.h"

namespace ringside {

// Whether this binary was built with --config=cuda.
bool BuiltWithCuda();

// UNIMPLEMENTED "<what>: built without CUDA: rebuild with --config=cuda".
absl::Status BuiltWithoutCudaError(absl::string_view what);

// cudaSetDevice. Non-blocking.
absl::Status SetCudaDevice(int device);
// The device's name ("NVIDIA H100 80GB HBM3") and PCI bus id
// ("0000:3b:00.0"). Blocking.
absl::StatusOr<std::string> CudaDeviceName(int device);
absl::StatusOr<std::string> CudaPciBusId(int device);

// A CUDA stream created with cudaStreamNonBlocking on a device (it does not
// order after the legacy default stream).
class OwnedCudaStream {
 public:
  OwnedCudaStream() = default;
  static absl::StatusOr<OwnedCudaStream> Create(int device);
  OwnedCudaStream(OwnedCudaStream&& other) noexcept;
  OwnedCudaStream& operator=(OwnedCudaStream&& other) noexcept;
  ~OwnedCudaStream();
  CudaStream get() const { return stream_; }

 private:
  int device_ = 0;
  CudaStream stream_ = nullptr;
};

// A CUDA event on a device; `timing` false creates it with
// cudaEventDisableTiming (cheaper; no EventSeconds).
class OwnedCudaEvent {
 public:
  OwnedCudaEvent() = default;
  static absl::StatusOr<OwnedCudaEvent> Create(int device, bool timing);
  OwnedCudaEvent(OwnedCudaEvent&& other) noexcept;
  OwnedCudaEvent& operator=(OwnedCudaEvent&& other) noexcept;
  ~OwnedCudaEvent();
  CudaEvent get() const { return event_; }

 private:
  int device_ = 0;
  CudaEvent event_ = nullptr;
};

// `floats` floats of page-locked host memory (cudaHostAlloc), so that
// device <-> host copies on a stream are truly asynchronous. Zeroed.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  static absl::StatusOr<PinnedHostBuffer> Create(int64_t floats);
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  ~PinnedHostBuffer();
  absl::Span<float> span() const { return absl::MakeSpan(data_, size_); }

 private:
  float* data_ = nullptr;
  int64_t size_ = 0;
};

// cudaEventRecord(event, stream). Non-blocking.
absl::Status RecordEvent(CudaEvent event, CudaStream stream);
// cudaEventSynchronize: blocks the calling thread until the work before the
// event's last record has finished.
absl::Status WaitForEvent(CudaEvent event);
// cudaEventQuery: whether that work has finished. Non-blocking.
absl::StatusOr<bool> EventCompleted(CudaEvent event);
// cudaStreamWaitEvent: later work on `stream` waits for the event.
// Non-blocking.
absl::Status StreamWaitEvent(CudaStream stream, CudaEvent event);
// cudaStreamSynchronize. Blocking.
absl::Status SynchronizeStream(CudaStream stream);
// Seconds between two completed timing events (cudaEventElapsedTime).
absl::StatusOr<double> EventSeconds(CudaEvent start, CudaEvent stop);
// Enqueues a copy of `floats` floats on `stream` (cudaMemcpyAsync with
// cudaMemcpyDefault: host, pinned or device memory either way).
// Non-blocking; pageable host memory makes it synchronous.
absl::Status CopyAsync(float* dst, const float* src, int64_t floats,
                       CudaStream stream);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_CUDA_SUPPORT_H_
