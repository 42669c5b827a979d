// CudaBackend: the ComputeBackend (worker/compute_backend.h) of a CUDA
// worker, with the model, the parameters and the gradients on one GPU:
//
//   - parameters and gradients are flat device buffers (DeviceBuffer) of
//     the CudaModel's layout (CudaMlp or CudaCharLm); the model runs on a
//     compute stream of its own and reports gradient i as QUEUED
//     (SyncContext::grad_ready_event(i) says when it is final);
//   - a strategy with SupportsDevice(kCuda) (baseline, ring, fusion,
//     zero1, zero2, zero3) gets the device buffers (NCCL and the optimizer
//     on the GPU); any other (sps, dps, ...) runs through
//     HostStagingStrategy (pinned host copies), which this backend owns;
//   - parameter use (zero3): InstallParamUse hands the hooks to a model
//     that ReportsParamUse (CudaMlp per tensor, CudaCharLm as one unit;
//     UNIMPLEMENTED otherwise); they run at enqueue time
//     (models/cuda/cuda_model.h). Hooks installed before Init make the
//     parameter and gradient buffers MappedDeviceBuffers
//     (device/mapped_device_buffer.h, SyncContext::param_pages and
//     grad_pages), whose pages the strategy gives back and maps again: the
//     final record says "memory_saving":"realised" with the most bytes each
//     buffer had mapped at once after the strategy's Init
//     ("device_param_bytes", "device_grad_bytes"), the page size and the
//     device's memory in use at the end (cudaMemGetInfo,
//     "device_memory_in_use", everything this process and others hold).
//     Where the device cannot map page by page the buffers stay whole-size
//     and the record says "counted_not_realised" and why -- param_bytes /
//     grad_bytes then are what the strategy holds logically;
//   - input: the loop reads each batch one pass ahead and this backend
//     copies it to the device on a copy stream of its own, from pinned
//     memory (BatchStager), so the copy overlaps the previous pass's
//     kernels; models that read staged input (CudaMlp) skip their own
//     copy, others (CudaCharLm, whose token batches are small) copy as
//     before;
//   - the model's compute time per step = its kernels' time from CUDA
//     events (CudaModel::last_compute_seconds; the loop adds the strategy's
//     local optimizer time, device time for the CUDA optimizer), so the
//     final record says "device":"cuda", "timing":"cuda_events"; with NVML
//     available (libnvidia-ml.so.1) it adds "nvml_utilization", the mean
//     NVML GPU utilization over the measured steps, and
//     "utilization_check":"nvml" ("none" otherwise); also "gpu" (device
//     index), "gpu_name" and "host_staging".
//
// Compiles in every build; without --config=cuda Init fails at the first
// CUDA call with "built without CUDA: rebuild with --config=cuda". Not
// thread-safe; the model must outlive it.
#ifndef RINGSIDE_WORKER_CUDA_BACKEND_H_
#define RINGSIDE_WORKER_CUDA_BACKEND_H_

#include <memory>
#include <optional>
#include <string>

#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "device/gradient_stash.h"
#include "device/mapped_device_buffer.h"
#include "models/cuda/cuda_model.h"
#include "worker/batch_stager.h"
#include "worker/compute_backend.h"
#include "worker/nvml_sampler.h"
#include "worker/strategies/host_staging_strategy.h"

namespace ringside {

struct CudaTrainOptions {
  // Sample NVML over the measured steps when libnvidia-ml.so.1 loads.
  bool nvml = true;
};

class CudaBackend final : public ComputeBackend {
 public:
  CudaBackend(CudaModel& model, const CudaTrainOptions& options)
      : model_(model), options_(options) {}

  absl::Status Init(uint64_t init_seed, SyncContext& context) override;
  SyncStrategy& Adapt(SyncStrategy& strategy) override;
  absl::Status InstallParamUse(const ParamUseHooks* hooks) override;
  void BeginStep(int64_t step, bool measured) override;
  // Batches are read ahead and staged into device memory on a copy
  // stream (worker/batch_stager.h).
  bool PrefetchesBatches() const override { return true; }
  absl::Status PrepareBatch(const Batch& batch) override;
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const GradientReadyFn& on_ready) override;
  double ComputeSeconds(double) const override {
    return model_.last_compute_seconds();
  }
  // The stash is a GradientStash (device/gradient_stash.h), made at the
  // first StashGradients.
  absl::Status StashGradients(bool first) override;
  absl::Status FoldStashedGradient(int tensor, int passes) override;
  int64_t StashBytes() const override {
    return stash_.has_value() ? stash_->bytes() : 0;
  }
  void EndSteps() override;
  // Waits for the compute stream first (the strategy's last work on it).
  absl::StatusOr<double> Evaluate(const Batch& batch) override;
  absl::StatusOr<std::vector<float>> FinalParams() override;
  std::string model_name() const override { return model_.name(); }
  nlohmann::json RecordFields() const override;

 private:
  CudaModel& model_;
  const CudaTrainOptions options_;
  std::string gpu_name_;
  // The buffers: page by page for a strategy that installed hooks, else
  // whole. The accessors give whichever is there.
  absl::Status AllocateBuffers(int device, int64_t elements);
  float* params_data() const;
  float* grads_data() const;

  // Declared before staging_: the strategy's adapter goes first.
  DeviceBuffer params_;
  DeviceBuffer grads_;
  std::unique_ptr<MappedDeviceBuffer> mapped_params_;
  std::unique_ptr<MappedDeviceBuffer> mapped_grads_;
  // Why the buffers are whole although hooks are installed.
  absl::Status mapping_status_ = absl::FailedPreconditionError(
      "the hooks were installed after Init had allocated the buffers");
  absl::StatusOr<int64_t> device_memory_in_use_ = absl::UnknownError("");
  OwnedCudaStream stream_;
  std::unique_ptr<BatchStager> stager_;
  std::optional<GradientStash> stash_;  // gradient accumulation
  std::unique_ptr<HostStagingStrategy> staging_;
  // Whether hooks were ever installed (a strategy that shards the
  // parameters): the record's "memory_saving".
  bool param_use_ = false;
  // NVML: started at the first measured step, stopped by EndSteps.
  bool nvml_tried_ = false;
  std::unique_ptr<NvmlSampler> nvml_;
  absl::Status nvml_status_ = absl::NotFoundError("NVML sampling off");
  absl::StatusOr<double> nvml_utilization_ = nvml_status_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_CUDA_BACKEND_H_
