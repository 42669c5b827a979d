#include "worker/strategies/sharded/zero3_device_order.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {

absl::Status WaitForEventWithin(CudaEvent event, absl::Duration timeout,
                                const std::string& what) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration nap = absl::Microseconds(10);
  while (true) {
    RS_ASSIGN_OR_RETURN(const bool done, EventCompleted(event));
    if (done) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "waited ", absl::FormatDuration(timeout), " for ", what));
    }
    absl::SleepFor(nap);
    nap = std::min(nap * 2, absl::Milliseconds(1));
  }
}

absl::StatusOr<std::unique_ptr<Zero3DeviceOrder>> Zero3DeviceOrder::Create(
    const SyncContext& context) {
  if (context.compute_stream == nullptr) {
    return absl::FailedPreconditionError(
        "zero3 on a CUDA worker needs the context's compute stream");
  }
  std::unique_ptr<Zero3DeviceOrder> order(new Zero3DeviceOrder(context));
  RS_ASSIGN_OR_RETURN(order->gather_stream_,
                      OwnedCudaStream::Create(context.cuda_device));
  for (int t = 0; t < context.layout.num_tensors(); ++t) {
    RS_ASSIGN_OR_RETURN(OwnedCudaEvent released,
                        OwnedCudaEvent::Create(context.cuda_device, false));
    RS_ASSIGN_OR_RETURN(OwnedCudaEvent gathered,
                        OwnedCudaEvent::Create(context.cuda_device, false));
    order->released_.push_back(std::move(released));
    order->gathered_.push_back(std::move(gathered));
  }
  return order;
}

absl::Status Zero3DeviceOrder::Released(int tensor) {
  return Annotate(RecordEvent(released_[tensor].get(), context_.compute_stream),
                  absl::StrCat("marking the last read of ",
                               context_.layout.tensor(tensor).name));
}

absl::Status Zero3DeviceOrder::BeforeGather(int tensor,
                                            absl::Duration timeout) {
  return WaitForEventWithin(released_[tensor].get(), timeout,
                            absl::StrCat("the compute stream's last read of ",
                                         context_.layout.tensor(tensor).name,
                                         " before gathering into it"));
}

absl::Status Zero3DeviceOrder::AfterGather(int tensor) {
  return Annotate(RecordEvent(gathered_[tensor].get(), gather_stream_.get()),
                  absl::StrCat("marking the all-gather of ",
                               context_.layout.tensor(tensor).name));
}

absl::Status Zero3DeviceOrder::BeforeRead(int tensor) {
  return Annotate(
      StreamWaitEvent(context_.compute_stream, gathered_[tensor].get()),
      absl::StrCat("ordering the reads of ",
                   context_.layout.tensor(tensor).name,
                   " after its all-gather"));
}

}  // namespace ringside
