#include "worker/batch_stager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/parallel_copy.h"
#include "common/status_macros.h"
#include "device/cuda_device.h"

namespace ringside {

static_assert(sizeof(int32_t) == sizeof(float),
              "labels and tokens travel in float-sized device buffers");

absl::StatusOr<std::unique_ptr<BatchStager>> BatchStager::Create(int device) {
  RS_RETURN_IF_ERROR(SetCudaDevice(device));
  std::unique_ptr<BatchStager> stager(new BatchStager(device));
  RS_ASSIGN_OR_RETURN(stager->copy_stream_, OwnedCudaStream::Create(device));
  for (Slot& slot : stager->slots_) {
    RS_ASSIGN_OR_RETURN(slot.copied,
                        OwnedCudaEvent::Create(device, /*timing=*/false));
    RS_ASSIGN_OR_RETURN(slot.consumed,
                        OwnedCudaEvent::Create(device, /*timing=*/false));
  }
  return stager;
}

BatchStager::Slot* BatchStager::SlotOf(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Slot& slot : slots_) {
    if (slot.owner == &batch) return &slot;
  }
  for (Slot& slot : slots_) {
    if (slot.owner == nullptr) {
      slot.owner = &batch;
      return &slot;
    }
  }
  return nullptr;
}

absl::Status BatchStager::StageArray(const void* data, int64_t elements,
                                     Array& array) {
  array.used = elements;
  if (elements == 0) return absl::OkStatus();
  if (static_cast<int64_t>(array.host.span().size()) < elements) {
    RS_ASSIGN_OR_RETURN(array.host, PinnedHostBuffer::Create(elements));
    RS_ASSIGN_OR_RETURN(array.device, DeviceBuffer::Create(device_, elements));
  }
  ParallelCopy(array.host.span().data(), data, elements * sizeof(float));
  return CopyAsync(array.device.data(), array.host.span().data(), elements,
                   copy_stream_.get());
}

absl::Status BatchStager::Stage(const Batch& batch) {
  Slot* slot = SlotOf(batch);
  if (slot == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "BatchStager: more than ", kSlots, " Batch objects staged"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot->staged = false;
  }
  RS_RETURN_IF_ERROR(SetCudaDevice(device_));
  // The pinned buffers are free once the slot's last copies are done; the
  // device buffers once its last reader is (both no-ops before the first).
  RS_RETURN_IF_ERROR(WaitForEvent(slot->copied.get()));
  RS_RETURN_IF_ERROR(StreamWaitEvent(copy_stream_.get(), slot->consumed.get()));
  RS_RETURN_IF_ERROR(StageArray(batch.features.data(),
                                static_cast<int64_t>(batch.features.size()),
                                slot->features));
  RS_RETURN_IF_ERROR(StageArray(batch.labels.data(),
                                static_cast<int64_t>(batch.labels.size()),
                                slot->labels));
  RS_RETURN_IF_ERROR(StageArray(batch.tokens.data(),
                                static_cast<int64_t>(batch.tokens.size()),
                                slot->tokens));
  RS_RETURN_IF_ERROR(RecordEvent(slot->copied.get(), copy_stream_.get()));
  std::lock_guard<std::mutex> lock(mu_);
  slot->size = batch.size;
  slot->staged = true;
  ++staged_;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<DeviceBatch>> BatchStager::Acquire(
    const Batch& batch, CudaStream stream) {
  Slot* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Slot& slot : slots_) {
      if (slot.owner == &batch && slot.staged && slot.size == batch.size &&
          slot.features.used == static_cast<int64_t>(batch.features.size()) &&
          slot.labels.used == static_cast<int64_t>(batch.labels.size()) &&
          slot.tokens.used == static_cast<int64_t>(batch.tokens.size())) {
        found = &slot;
      }
    }
  }
  if (found == nullptr) return std::nullopt;
  RS_RETURN_IF_ERROR(StreamWaitEvent(stream, found->copied.get()));
  auto device_ints = [](const Array& array) -> const int32_t* {
    return array.used == 0
               ? nullptr
               : reinterpret_cast<const int32_t*>(array.device.data());
  };
  DeviceBatch view;
  view.size = batch.size;
  view.features =
      found->features.used == 0 ? nullptr : found->features.device.data();
  view.labels = device_ints(found->labels);
  view.tokens = device_ints(found->tokens);
  return view;
}

absl::Status BatchStager::Release(const Batch& batch, CudaStream stream) {
  Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Slot& s : slots_) {
      if (s.owner == &batch) slot = &s;
    }
    if (slot == nullptr) return absl::OkStatus();  // never staged
    slot->staged = false;
  }
  return RecordEvent(slot->consumed.get(), stream);
}

}  // namespace ringside
