#include "worker/cuda_backend.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_device.h"
#include "device/cuda_event.h"
#include "device/device_buffer.h"
#include "models/precision.h"

namespace ringside {

absl::Status CudaBackend::Init(uint64_t init_seed, SyncContext& context) {
  const int device = model_.device();
  const TensorLayout& layout = model_.layout();
  const int64_t elements = layout.total_elements();
  RS_RETURN_IF_ERROR(SetCudaDevice(device));
  RS_ASSIGN_OR_RETURN(gpu_name_, CudaDeviceName(device));
  RS_RETURN_IF_ERROR(AllocateBuffers(device, elements));
  RS_RETURN_IF_ERROR(model_.InitDeviceParams(init_seed, params_data()));
  RS_RETURN_IF_ERROR(ZeroOnDevice(grads_data(), elements));
  RS_ASSIGN_OR_RETURN(stream_, OwnedCudaStream::Create(device));
  RS_ASSIGN_OR_RETURN(stager_, BatchStager::Create(device));
  context.layout = layout;
  context.params = absl::MakeSpan(params_data(), elements);
  context.grads = absl::MakeSpan(grads_data(), elements);
  context.param_pages = mapped_params_.get();
  context.grad_pages = mapped_grads_.get();
  context.device = Device::kCuda;
  context.cuda_device = device;
  context.compute_stream = stream_.get();
  CudaModel* model = &model_;
  context.grad_ready_event = [model](int i) {
    return model->grad_ready_event(i);
  };
  return absl::OkStatus();
}

absl::Status CudaBackend::AllocateBuffers(int device, int64_t elements) {
  // A strategy that keeps the parameters sharded gives pages back.
  if (param_use_ && elements > 0) {
    absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> params =
        MappedDeviceBuffer::Create(device, elements);
    absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> grads =
        params.ok() ? MappedDeviceBuffer::Create(device, elements)
                    : params.status();
    if (grads.ok()) {
      mapped_params_ = *std::move(params);
      mapped_grads_ = *std::move(grads);
      return absl::OkStatus();
    }
    mapping_status_ = grads.status();
  }
  RS_ASSIGN_OR_RETURN(params_, DeviceBuffer::Create(device, elements));
  RS_ASSIGN_OR_RETURN(grads_, DeviceBuffer::Create(device, elements));
  return absl::OkStatus();
}

float* CudaBackend::params_data() const {
  return mapped_params_ != nullptr ? mapped_params_->data() : params_.data();
}

float* CudaBackend::grads_data() const {
  return mapped_grads_ != nullptr ? mapped_grads_->data() : grads_.data();
}

SyncStrategy& CudaBackend::Adapt(SyncStrategy& strategy) {
  // Host-memory strategies run through pinned staging buffers.
  if (strategy.SupportsDevice(Device::kCuda)) return strategy;
  staging_ = std::make_unique<HostStagingStrategy>(&strategy);
  return *staging_;
}

absl::Status CudaBackend::InstallParamUse(const ParamUseHooks* hooks) {
  if (hooks != nullptr && !model_.ReportsParamUse()) {
    return absl::UnimplementedError(absl::StrCat(
        "CUDA model ", model_.name(),
        " does not report parameter use (models/cuda/cuda_model.h), which a "
        "strategy keeping the parameters sharded needs; CUDA models that do: "
        "mlp, charlm"));
  }
  model_.SetParamUseHooks(hooks);
  param_use_ = param_use_ || hooks != nullptr;
  return absl::OkStatus();
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

absl::Status CudaBackend::PrepareBatch(const Batch& batch) {
  if (stager_ == nullptr) {
    return absl::FailedPreconditionError(
        "CudaBackend: PrepareBatch before Init");
  }
  return stager_->Stage(batch);
}

absl::StatusOr<double> CudaBackend::ForwardBackward(
    const Batch& batch, const GradientReadyFn& on_ready) {
  if (stager_ != nullptr) {
    RS_ASSIGN_OR_RETURN(std::optional<DeviceBatch> staged,
                        stager_->Acquire(batch, stream_.get()));
    if (staged.has_value()) model_.UseStagedInput(*staged);
  }
  absl::StatusOr<double> loss = model_.ForwardBackward(
      batch, params_data(), grads_data(), on_ready, stream_.get());
  if (stager_ != nullptr) {
    RS_RETURN_IF_ERROR(stager_->Release(batch, stream_.get()));
  }
  return loss;
}

absl::Status CudaBackend::StashGradients(bool first) {
  if (!stash_.has_value()) {
    RS_ASSIGN_OR_RETURN(GradientStash made,
                        GradientStash::Create(model_.device(),
                                              model_.layout().total_elements()));
    stash_ = std::move(made);
  }
  return stash_->Add(grads_data(), first, stream_.get());
}

absl::Status CudaBackend::FoldStashedGradient(int tensor, int passes) {
  const TensorLayout& layout = model_.layout();
  if (!stash_.has_value() || tensor < 0 || tensor >= layout.num_tensors()) {
    return absl::FailedPreconditionError(
        absl::StrCat("FoldStashedGradient(", tensor, ", ", passes,
                     ") without a stash, or out of range"));
  }
  const TensorSpec& spec = layout.tensor(tensor);
  RS_RETURN_IF_ERROR(stash_->Fold(grads_data(), spec.offset, spec.size,
                                  passes, stream_.get()));
  // The strategy waits on this event: it must cover the fold too.
  return RecordEvent(model_.grad_ready_event(tensor), stream_.get());
}

void CudaBackend::EndSteps() {
  if (mapped_params_ != nullptr) {
    device_memory_in_use_ = CudaMemoryInUse(model_.device());
  }
  nvml_utilization_ =
      nvml_ != nullptr ? nvml_->Stop() : absl::StatusOr<double>(nvml_status_);
  nvml_.reset();
}

absl::StatusOr<double> CudaBackend::Evaluate(const Batch& batch) {
  RS_RETURN_IF_ERROR(SynchronizeStream(stream_.get()));
  return model_.Evaluate(batch, params_data(), stream_.get());
}

absl::StatusOr<std::vector<float>> CudaBackend::FinalParams() {
  std::vector<float> params(model_.layout().total_elements());
  RS_RETURN_IF_ERROR(CopyToHost(params_data(), absl::MakeSpan(params)));
  return params;
}

nlohmann::json CudaBackend::RecordFields() const {
  nlohmann::json fields = {
      {"emulated", false},
      {"device", "cuda"},
      {"precision", PrecisionName(model_.precision())},
      {"timing", "cuda_events"},
      {"gpu", model_.device()},
      {"gpu_name", gpu_name_},
      {"host_staging", staging_ != nullptr},
      {"utilization_check", nvml_utilization_.ok() ? "nvml" : "none"},
  };
  if (nvml_utilization_.ok()) fields["nvml_utilization"] = *nvml_utilization_;
  // Sharded parameters on a device: pages given back, or whole buffers
  // (the device cannot map page by page) with the saving only counted.
  if (mapped_params_ != nullptr) {
    fields["memory_saving"] = "realised";
    fields["device_param_bytes"] = mapped_params_->peak_mapped_bytes();
    fields["device_grad_bytes"] = mapped_grads_->peak_mapped_bytes();
    fields["device_page_bytes"] = mapped_params_->page_bytes();
    if (device_memory_in_use_.ok()) {
      fields["device_memory_in_use"] = *device_memory_in_use_;
    }
  } else if (param_use_) {
    fields["memory_saving"] = "counted_not_realised";
    fields["memory_saving_why"] = std::string(mapping_status_.message());
  }
  return fields;
}

}  // namespace ringside
