// CUDA events: an owner for one event, and the event operations of the CUDA
// paths (record, wait, poll, time), as absl::Status for code that must
// compile without CUDA's headers.
//
// Built with --config=cuda this is the CUDA runtime (cuda_event.cc);
// without it every call returns UNIMPLEMENTED "CUDA event: built without
// CUDA: rebuild with --config=cuda" (cuda_event_stub.cc). Errors otherwise
// carry CUDA's own message and our file:line (device/cuda_status.h).
//
// Thread-safety: the free functions are thread-safe (as the CUDA runtime
// is). OwnedCudaEvent is move-only and not thread-safe; destroying it
// destroys the event without reporting errors. Create makes the device
// current on the calling thread and leaves it so.
#ifndef RINGSIDE_DEVICE_CUDA_EVENT_H_
#define RINGSIDE_DEVICE_CUDA_EVENT_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cuda_handles.h"

namespace ringside {

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

// cudaEventRecord(event, stream). Non-blocking.
absl::Status RecordEvent(CudaEvent event, CudaStream stream);
// cudaEventSynchronize: blocks the calling thread until the work before the
// event's last record has finished.
absl::Status WaitForEvent(CudaEvent event);
// cudaEventQuery: whether that work has finished. Non-blocking.
absl::StatusOr<bool> EventCompleted(CudaEvent event);
// Seconds between two completed timing events (cudaEventElapsedTime).
absl::StatusOr<double> EventSeconds(CudaEvent start, CudaEvent stop);

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_CUDA_EVENT_H_
