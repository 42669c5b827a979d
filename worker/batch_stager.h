// BatchStager: copies training batches into device memory ahead of their
// step, on a copy stream of its own, from page-locked host memory, so the
// copy overlaps the previous step's kernels instead of running in line
// (PyTorch's pin_memory + non_blocking copies). The CUDA backend stages
// each batch the prefetcher reads (worker/batch_prefetcher.h).
//
// Stage(batch), on the prefetcher's thread: copies the batch's arrays
// (features, labels, tokens) into the pinned buffers of the slot that
// `batch` (the Batch object) owns, then enqueues their copies to the
// slot's device buffers on the copy stream, after the slot's last reader
// (Release) is done. Acquire(batch, stream), on the training thread: the
// device arrays of the batch last staged from that object, with `stream`
// made to wait for their copies; nullopt for a batch never staged (an
// evaluation batch, a loop without the prefetcher). Release(batch, stream)
// after the stream's last read of them. A Batch object must not change
// between its Stage and its Release (the prefetcher's contract).
//
// Up to kSlots Batch objects (the prefetcher's two). Compiles in every
// build (the device layer's wrappers); without CUDA Create fails with
// "built without CUDA". Stage may run on one thread while Acquire and
// Release run on another, for different Batch objects.
#ifndef RINGSIDE_WORKER_BATCH_STAGER_H_
#define RINGSIDE_WORKER_BATCH_STAGER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cuda_event.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "device/pinned_host_buffer.h"
#include "models/cuda/cuda_model.h"
#include "models/dataset.h"

namespace ringside {

class BatchStager {
 public:
  static constexpr int kSlots = 2;
  static absl::StatusOr<std::unique_ptr<BatchStager>> Create(int device);

  absl::Status Stage(const Batch& batch);
  absl::StatusOr<std::optional<DeviceBatch>> Acquire(const Batch& batch,
                                                     CudaStream stream);
  absl::Status Release(const Batch& batch, CudaStream stream);

  // Batches staged so far.
  int64_t staged() const { return staged_; }

 private:
  // One array of a slot: pinned host and device copies, grown as needed.
  struct Array {
    PinnedHostBuffer host;
    DeviceBuffer device;
    int64_t used = 0;  // elements of the last staged batch
  };
  struct Slot {
    const Batch* owner = nullptr;
    bool staged = false;  // holds owner's current data, not yet released
    int64_t size = 0;
    Array features, labels, tokens;
    OwnedCudaEvent copied;    // on the copy stream, after the copies
    OwnedCudaEvent consumed;  // on the reader's stream, after its reads
  };
  explicit BatchStager(int device) : device_(device) {}
  // The slot `batch` owns, claiming a free one; null when all are taken.
  Slot* SlotOf(const Batch& batch);
  absl::Status StageArray(const void* data, int64_t elements, Array& array);

  const int device_;
  OwnedCudaStream copy_stream_;
  std::mutex mu_;  // guards the slots' owner and staged flags
  std::array<Slot, kSlots> slots_;
  int64_t staged_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_BATCH_STAGER_H_
