// MappedDeviceBuffer: an array of floats in one CUDA device's memory whose
// physical pages can be given back and brought back while its addresses
// stay the same, so a model that holds pointers into it needs no change
// (ZeRO-3's parameters and gradients, worker/strategies/sharded). It is
// CUDA's virtual memory management: one address reservation
// (cuMemAddressReserve) for the whole array, each page of the allocation
// granularity (typically 2 MiB) its own physical allocation (cuMemCreate),
// mapped (cuMemMap, cuMemSetAccess for read/write on the device) or not.
// The driver's functions come through cudaGetDriverEntryPointByVersion, so
// nothing links libcuda.
//
//   Create     reserves and maps every page, with one hold on the whole
//              array (the caller fills it; Drop(0, size()) ends that hold).
//   Hold       adds a hold on floats [begin, end): every page it touches
//              that was not mapped is mapped before Hold returns (its bytes
//              undefined until something writes them). Blocking, host only.
//   Drop       ends one hold of [begin, end) (a range held before, page for
//              page; PageRefcounts, device/page_refcounts.h): the pages left
//              without a hold are unmapped once the work queued on `after`
//              so far has completed (an event recorded there; nullptr: the
//              caller says no queued work reads them, unmapped now). A page
//              held again before that stays mapped. The unmapping of earlier
//              drops happens in later calls (Hold, Drop, Collect) whose
//              events have completed: nothing waits.
//   Collect    does that unmapping now, without a new hold or drop.
//
// mapped_bytes counts every page mapped, including pages whose drop waits
// for its event (they are still device memory); peak_mapped_bytes is the
// most since Create or ResetPeak. Errors carry CUDA's message and name the
// page; INVALID_ARGUMENT for a range outside the array, FAILED_PRECONDITION
// for a drop without its hold; UNIMPLEMENTED when the device does not
// support virtual memory management (callers fall back to DeviceBuffer).
//
// Thread-safe: one mutex (zero3 holds and drops on the training thread and
// drops reduced gradients on its communication thread). The destructor
// unmaps and frees everything after synchronizing the device's work on the
// pages it still has queued drops for; without --config=cuda Create answers
// "built without CUDA".
#ifndef RINGSIDE_DEVICE_MAPPED_DEVICE_BUFFER_H_
#define RINGSIDE_DEVICE_MAPPED_DEVICE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "device/cuda_handles.h"

namespace ringside {

class MappedDeviceBuffer {
 public:
  // `floats` floats on CUDA device `device`, every page mapped and held
  // once. `floats` > 0.
  static absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> Create(
      int device, size_t floats);
  virtual ~MappedDeviceBuffer() = default;

  // Device memory: never dereference on the host.
  virtual float* data() const = 0;
  virtual size_t size() const = 0;
  absl::Span<float> span() const { return absl::MakeSpan(data(), size()); }
  virtual size_t page_bytes() const = 0;

  virtual absl::Status Hold(size_t begin, size_t end) = 0;
  virtual absl::Status Drop(size_t begin, size_t end, CudaStream after) = 0;
  virtual absl::Status Collect() = 0;

  virtual int64_t mapped_bytes() const = 0;
  virtual int64_t peak_mapped_bytes() const = 0;
  // The peak from now on starts at mapped_bytes().
  virtual void ResetPeak() = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_MAPPED_DEVICE_BUFFER_H_
