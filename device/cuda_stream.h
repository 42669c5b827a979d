// CUDA streams: an owner for one stream, and the stream operations of the
// CUDA paths (wait for an event, synchronize, asynchronous copies), as
// absl::Status for code that must compile without CUDA's headers.
//
// Built with --config=cuda this is the CUDA runtime (cuda_stream.cc);
// without it every call returns UNIMPLEMENTED "CUDA stream: built without
// CUDA: rebuild with --config=cuda" (cuda_stream_stub.cc). Errors otherwise
// carry CUDA's own message and our file:line (device/cuda_status.h).
//
// Thread-safety: the free functions are thread-safe (as the CUDA runtime
// is). OwnedCudaStream is move-only and not thread-safe; destroying it
// destroys the stream without reporting errors. Create makes the device
// current on the calling thread and leaves it so.
#ifndef RINGSIDE_DEVICE_CUDA_STREAM_H_
#define RINGSIDE_DEVICE_CUDA_STREAM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cuda_handles.h"

namespace ringside {

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

// cudaStreamWaitEvent: later work on `stream` waits for the event.
// Non-blocking.
absl::Status StreamWaitEvent(CudaStream stream, CudaEvent event);
// cudaStreamSynchronize. Blocking.
absl::Status SynchronizeStream(CudaStream stream);
// Enqueues a copy of `floats` floats on `stream` (cudaMemcpyAsync with
// cudaMemcpyDefault: host, pinned or device memory either way).
// Non-blocking; pageable host memory makes it synchronous.
absl::Status CopyAsync(float* dst, const float* src, int64_t floats,
                       CudaStream stream);

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_CUDA_STREAM_H_
