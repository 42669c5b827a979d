#include "worker/host_staging_strategy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {

HostStagingStrategy::~HostStagingStrategy() { StopThread(); }

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
  stage_thread_ = std::thread([this] { StageLoop(); });
  return absl::OkStatus();
}

void HostStagingStrategy::OnGradientReady(int tensor_index) {
  const double now = device_.options.timeline ? NowSeconds() : 0.0;
  const TensorSpec& spec = device_.layout.tensor(tensor_index);
  absl::Status s = [&]() -> absl::Status {
    RS_RETURN_IF_ERROR(StreamWaitEvent(copy_stream_.get(),
                                       device_.grad_ready_event(tensor_index)));
    RS_RETURN_IF_ERROR(CopyAsync(grads_.span().data() + spec.offset,
                                 device_.grads.data() + spec.offset, spec.size,
                                 copy_stream_.get()));
    return RecordEvent(copied_[tensor_index].get(), copy_stream_.get());
  }();
  absl::MutexLock lock(&mu_);
  if (!s.ok() && error_.ok()) {
    error_ = Annotate(
        s, absl::StrCat("staging the gradient of ", spec.name, " to the host"));
  }
  queue_.push_back({tensor_index, now});
}

void HostStagingStrategy::StageLoop() {
  while (true) {
    Queued item;
    bool failed;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      item = queue_.front();
      queue_.pop_front();
      failed = !error_.ok();
    }
    absl::Status s;
    if (!failed) {
      s = WaitForEvent(copied_[item.tensor].get());
      if (s.ok()) inner_->OnGradientReady(item.tensor);
    }
    if (Timeline* timeline = device_.options.timeline) {
      timeline->Span(device_.layout.tensor(item.tensor).name, "STAGE_D2H",
                     item.ready_s, NowSeconds(),
                     {{"bytes", device_.layout.tensor(item.tensor).size * 4}});
    }
    absl::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) {
      error_ = Annotate(s, absl::StrCat("copying the gradient of ",
                                        device_.layout.tensor(item.tensor).name,
                                        " to the host"));
    }
    ++handed_;
  }
}

absl::Status HostStagingStrategy::WaitForParamsCopy() {
  if (!params_copy_pending_) return absl::OkStatus();
  params_copy_pending_ = false;
  return Annotate(WaitForEvent(params_copied_.get()),
                  "copying the parameters to the device");
}

absl::StatusOr<StepStats> HostStagingStrategy::FinishStep(int64_t step) {
  const int n = device_.layout.num_tensors();
  {
    absl::MutexLock lock(&mu_);
    auto all_handed = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return handed_ == n;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&all_handed),
                              device_.options.rpc_timeout)) {
      return absl::DeadlineExceededError(
          absl::StrCat("step ", step, ": only ", handed_, " of ", n,
                       " gradients staged to the host within the deadline (was "
                       "OnGradientReady called for every tensor?)"));
    }
    handed_ = 0;
    if (!error_.ok()) return error_;
  }
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

void HostStagingStrategy::StopThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (stage_thread_.joinable()) stage_thread_.join();
}

absl::Status HostStagingStrategy::Shutdown() {
  StopThread();
  absl::Status copied = WaitForParamsCopy();
  absl::Status inner = inner_->Shutdown();
  return copied.ok() ? inner : copied;
}

}  // namespace ringside
