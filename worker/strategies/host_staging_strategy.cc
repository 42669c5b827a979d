#include "worker/strategies/host_staging_strategy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "device/cuda_device.h"

namespace ringside {

HostStagingStrategy::~HostStagingStrategy() {
  if (stage_ != nullptr) stage_->Stop();
}

absl::Status HostStagingStrategy::Init(const SyncContext& context) {
  if (context.device != Device::kCuda || context.compute_stream == nullptr ||
      !context.grad_ready_event) {
    return absl::InvalidArgumentError(
        "host staging needs a CUDA SyncContext (device kCuda, compute "
        "stream, grad_ready_event)");
  }
  device_ = context;
  const int device = context.cuda_device;
  const int64_t n = context.layout.total_elements();
  RS_RETURN_IF_ERROR(SetCudaDevice(device));
  RS_ASSIGN_OR_RETURN(params_, PinnedHostBuffer::Create(n));
  RS_ASSIGN_OR_RETURN(grads_, PinnedHostBuffer::Create(n));
  RS_ASSIGN_OR_RETURN(copy_stream_, OwnedCudaStream::Create(device));
  copied_.resize(context.layout.num_tensors());
  for (OwnedCudaEvent& e : copied_) {
    RS_ASSIGN_OR_RETURN(e, OwnedCudaEvent::Create(device, /*timing=*/false));
  }
  RS_ASSIGN_OR_RETURN(params_copied_,
                      OwnedCudaEvent::Create(device, /*timing=*/false));

  // Initial parameters to the host (after whatever wrote them on the
  // compute stream), the inner strategy's Init, and back.
  RS_RETURN_IF_ERROR(SynchronizeStream(context.compute_stream));
  RS_RETURN_IF_ERROR(CopyAsync(params_.span().data(), context.params.data(), n,
                               copy_stream_.get()));
  RS_RETURN_IF_ERROR(SynchronizeStream(copy_stream_.get()));
  host_ = context;
  host_.device = Device::kCpu;
  host_.cuda_device = -1;
  host_.compute_stream = nullptr;
  host_.grad_ready_event = nullptr;
  host_.params = params_.span();
  host_.grads = grads_.span();
  RS_RETURN_IF_ERROR(inner_->Init(host_));
  RS_RETURN_IF_ERROR(CopyAsync(context.params.data(), params_.span().data(), n,
                               copy_stream_.get()));
  RS_RETURN_IF_ERROR(SynchronizeStream(copy_stream_.get()));
  stage_ = std::make_unique<CommQueueThread>(
      context.layout.num_tensors(), "gradients staged to the host",
      context.options.timeline != nullptr,
      [this](int tensor, int64_t, double ready_s) {
        return HandOver(tensor, ready_s);
      });
  return absl::OkStatus();
}

void HostStagingStrategy::OnGradientReady(int tensor_index) {
  const TensorSpec& spec = device_.layout.tensor(tensor_index);
  absl::Status s = [&]() -> absl::Status {
    RS_RETURN_IF_ERROR(StreamWaitEvent(copy_stream_.get(),
                                       device_.grad_ready_event(tensor_index)));
    RS_RETURN_IF_ERROR(CopyAsync(grads_.span().data() + spec.offset,
                                 device_.grads.data() + spec.offset, spec.size,
                                 copy_stream_.get()));
    return RecordEvent(copied_[tensor_index].get(), copy_stream_.get());
  }();
  if (!s.ok()) {
    stage_->Fail(Annotate(
        s, absl::StrCat("staging the gradient of ", spec.name, " to the host")));
  }
  stage_->Enqueue(tensor_index);
}

absl::Status HostStagingStrategy::HandOver(int tensor, double ready_s) {
  const TensorSpec& spec = device_.layout.tensor(tensor);
  absl::Status s = WaitForEvent(copied_[tensor].get());
  if (s.ok()) inner_->OnGradientReady(tensor);
  if (Timeline* timeline = device_.options.timeline) {
    timeline->Span(spec.name, "STAGE_D2H", ready_s, NowSeconds(),
                   {{"bytes", spec.size * 4}});
  }
  return Annotate(s, absl::StrCat("copying the gradient of ", spec.name,
                                  " to the host"));
}

absl::Status HostStagingStrategy::WaitForParamsCopy() {
  if (!params_copy_pending_) return absl::OkStatus();
  params_copy_pending_ = false;
  return Annotate(WaitForEvent(params_copied_.get()),
                  "copying the parameters to the device");
}

absl::StatusOr<StepStats> HostStagingStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(stage_->WaitForStep(step, device_.options.rpc_timeout));
  // The pinned parameters are about to be overwritten by the pull.
  RS_RETURN_IF_ERROR(WaitForParamsCopy());
  RS_ASSIGN_OR_RETURN(StepStats stats, inner_->FinishStep(step));
  const double start = NowSeconds();
  RS_RETURN_IF_ERROR(CopyAsync(device_.params.data(), params_.span().data(),
                               device_.layout.total_elements(),
                               copy_stream_.get()));
  RS_RETURN_IF_ERROR(RecordEvent(params_copied_.get(), copy_stream_.get()));
  RS_RETURN_IF_ERROR(
      StreamWaitEvent(device_.compute_stream, params_copied_.get()));
  params_copy_pending_ = true;
  RecordSpan(device_.options.timeline, "step", "PARAMS_H2D", start,
             NowSeconds(), {{"step", step}});
  return stats;
}

absl::Status HostStagingStrategy::StopThen(
    absl::Status (SyncStrategy::*finish)()) {
  if (stage_ != nullptr) stage_->Stop();
  absl::Status copied = WaitForParamsCopy();
  absl::Status inner = (inner_->*finish)();
  return copied.ok() ? inner : copied;
}

absl::Status HostStagingStrategy::Shutdown() {
  return StopThen(&SyncStrategy::Shutdown);
}

absl::Status HostStagingStrategy::Abort() {
  return StopThen(&SyncStrategy::Abort);
}

}  // namespace ringside
