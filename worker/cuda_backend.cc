#include "worker/cuda_backend.h"

#include <utility>

#include "common/status_macros.h"
#include "device/cuda_device.h"

namespace ringside {

absl::Status CudaBackend::Init(uint64_t init_seed, SyncContext& context) {
  const int device = model_.device();
  const TensorLayout& layout = model_.layout();
  const int64_t elements = layout.total_elements();
  RS_RETURN_IF_ERROR(SetCudaDevice(device));
  RS_ASSIGN_OR_RETURN(gpu_name_, CudaDeviceName(device));
  RS_ASSIGN_OR_RETURN(params_, DeviceBuffer::Create(device, elements));
  RS_ASSIGN_OR_RETURN(grads_, DeviceBuffer::Create(device, elements));
  RS_RETURN_IF_ERROR(model_.InitDeviceParams(init_seed, params_.data()));
  RS_RETURN_IF_ERROR(grads_.Zero());
  RS_ASSIGN_OR_RETURN(stream_, OwnedCudaStream::Create(device));
  context.layout = layout;
  context.params = params_.span();
  context.grads = grads_.span();
  context.device = Device::kCuda;
  context.cuda_device = device;
  context.compute_stream = stream_.get();
  CudaModel* model = &model_;
  context.grad_ready_event = [model](int i) {
    return model->grad_ready_event(i);
  };
  return absl::OkStatus();
}

SyncStrategy& CudaBackend::Adapt(SyncStrategy& strategy) {
  // Host-memory strategies run through pinned staging buffers.
  if (strategy.SupportsDevice(Device::kCuda)) return strategy;
  staging_ = std::make_unique<HostStagingStrategy>(&strategy);
  return *staging_;
}

void CudaBackend::BeginStep(int64_t, bool measured) {
  if (nvml_tried_ || !measured || !options_.nvml) return;
  nvml_tried_ = true;
  absl::StatusOr<std::string> bus_id = CudaPciBusId(model_.device());
  absl::StatusOr<std::unique_ptr<NvmlSampler>> started =
      bus_id.ok()
          ? NvmlSampler::Start(*bus_id)
          : absl::StatusOr<std::unique_ptr<NvmlSampler>>(bus_id.status());
  if (started.ok()) {
    nvml_ = *std::move(started);
  } else {
    nvml_status_ = started.status();
  }
}

absl::StatusOr<double> CudaBackend::ForwardBackward(
    const Batch& batch, const GradientReadyFn& on_ready) {
  return model_.ForwardBackward(batch, params_.data(), grads_.data(), on_ready,
                                stream_.get());
}

void CudaBackend::EndSteps() {
  nvml_utilization_ =
      nvml_ != nullptr ? nvml_->Stop() : absl::StatusOr<double>(nvml_status_);
  nvml_.reset();
}

absl::StatusOr<double> CudaBackend::Evaluate(const Batch& batch) {
  RS_RETURN_IF_ERROR(SynchronizeStream(stream_.get()));
  return model_.Evaluate(batch, params_.data(), stream_.get());
}

absl::StatusOr<std::vector<float>> CudaBackend::FinalParams() {
  return params_.ToHost();
}

nlohmann::json CudaBackend::RecordFields() const {
  nlohmann::json fields = {
      {"emulated", false},
      {"device", "cuda"},
      {"timing", "cuda_events"},
      {"gpu", model_.device()},
      {"gpu_name", gpu_name_},
      {"host_staging", staging_ != nullptr},
      {"utilization_check", nvml_utilization_.ok() ? "nvml" : "none"},
  };
  if (nvml_utilization_.ok()) fields["nvml_utilization"] = *nvml_utilization_;
  return fields;
}

}  // namespace ringside
