#include "worker/cuda_trainer.h"

#include <memory>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "device/cuda_device.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "worker/host_staging_strategy.h"
#include "worker/nvml_sampler.h"
#include "worker/run_metrics.h"

namespace ringside {
absl::StatusOr<TrainResult> TrainOnCuda(
    CudaModel& model, Dataset& dataset, SyncStrategy& strategy,
    const RankInfo& rank, const OptimizerConfig& optimizer,
    const SyncOptions& sync, const TrainerOptions& options,
    const RecordFn& on_record, const CudaTrainOptions& cuda) {
  RS_RETURN_IF_ERROR(options.Validate());
  RS_RETURN_IF_ERROR(optimizer.Validate());
  const int device = model.device();
  const TensorLayout& layout = model.layout();
  const int64_t elements = layout.total_elements();
  RS_RETURN_IF_ERROR(SetCudaDevice(device));
  RS_ASSIGN_OR_RETURN(const std::string gpu_name, CudaDeviceName(device));
  RS_ASSIGN_OR_RETURN(DeviceBuffer params,
                      DeviceBuffer::Create(device, elements));
  RS_ASSIGN_OR_RETURN(DeviceBuffer grads,
                      DeviceBuffer::Create(device, elements));
  RS_RETURN_IF_ERROR(model.InitDeviceParams(options.init_seed, params.data()));
  RS_RETURN_IF_ERROR(grads.Zero());
  RS_ASSIGN_OR_RETURN(OwnedCudaStream stream, OwnedCudaStream::Create(device));

  // Host-memory strategies run through pinned staging buffers.
  std::unique_ptr<HostStagingStrategy> staging;
  SyncStrategy* active = &strategy;
  if (!strategy.SupportsDevice(Device::kCuda)) {
    staging = std::make_unique<HostStagingStrategy>(&strategy);
    active = staging.get();
  }
  SyncContext context;
  context.rank = rank.rank;
  context.world_size = rank.world_size;
  context.layout = layout;
  context.params = absl::MakeSpan(params.data(), elements);
  context.grads = absl::MakeSpan(grads.data(), elements);
  context.optimizer = optimizer;
  context.options = sync;
  context.device = Device::kCuda;
  context.cuda_device = device;
  context.compute_stream = stream.get();
  context.grad_ready_event = [&model](int i) {
    return model.grad_ready_event(i);
  };
  RS_RETURN_IF_ERROR(
      Annotate(active->Init(context), absl::StrCat(strategy.name(), " init")));
  // On an early return the strategy's threads must stop before the device
  // buffers they enqueue work on are freed (locals die in reverse order:
  // this runs first).
  bool shut_down = false;
  absl::Cleanup stop_strategy = [&] {
    if (!shut_down) active->Shutdown().IgnoreError();
  };

  const int64_t b = options.batch_size;
  const int64_t global_batch = b * rank.world_size;
  RunMetrics metrics(global_batch, options.warmup_steps);
  const GradientReadyFn on_ready = [active](int i) {
    active->OnGradientReady(i);
  };
  std::unique_ptr<NvmlSampler> nvml;
  absl::Status nvml_status = absl::NotFoundError("NVML sampling off");
  bool nvml_tried = false;
  Batch batch;
  // From 0, or from the step of the checkpoint the strategy resumed from.
  for (int64_t step = active->start_step(); step < options.steps; ++step) {
    if (!nvml_tried && step >= options.warmup_steps && cuda.nvml) {
      nvml_tried = true;
      absl::StatusOr<std::string> bus_id = CudaPciBusId(device);
      absl::StatusOr<std::unique_ptr<NvmlSampler>> started =
          bus_id.ok()
              ? NvmlSampler::Start(*bus_id)
              : absl::StatusOr<std::unique_ptr<NvmlSampler>>(bus_id.status());
      if (started.ok()) {
        nvml = *std::move(started);
      } else {
        nvml_status = started.status();
      }
    }
    StepTimes t;
    t.start = NowSeconds();
    RS_RETURN_IF_ERROR(
        dataset.TrainBatch(step * global_batch + rank.rank * b, b, &batch));
    t.compute_start = NowSeconds();
    RS_ASSIGN_OR_RETURN(
        double loss, model.ForwardBackward(batch, params.data(), grads.data(),
                                           on_ready, stream.get()));
    t.backward_end = NowSeconds();
    absl::StatusOr<StepStats> stats = active->FinishStep(step);
    t.finish_end = NowSeconds();
    // Device time: the model's kernels (and the local optimizer's).
    RS_RETURN_IF_ERROR(RecordStep(strategy, step, loss, t,
                                  model.last_compute_seconds(), stats,
                                  sync.timeline, metrics, on_record));
  }
  absl::StatusOr<double> nvml_utilization =
      nvml != nullptr ? nvml->Stop() : absl::StatusOr<double>(nvml_status);
  nvml.reset();
  shut_down = true;
  RS_RETURN_IF_ERROR(
      Annotate(active->Shutdown(), absl::StrCat(strategy.name(), " shutdown")));
  RS_RETURN_IF_ERROR(SynchronizeStream(stream.get()));

  TrainResult result;
  Batch eval;
  RS_RETURN_IF_ERROR(dataset.EvalBatch(&eval));
  RS_ASSIGN_OR_RETURN(result.eval_loss,
                      model.Evaluate(eval, params.data(), stream.get()));
  RS_ASSIGN_OR_RETURN(result.params, params.ToHost());
  // The fields of Train's final record, then the CUDA ones.
  result.final_record = {
      {"event", "final"},
      {"rank", rank.rank},
      {"world_size", rank.world_size},
      {"strategy", strategy.name()},
      {"model", model.name()},
      {"batch_size", b},
      {"steps", options.steps},
      {"start_step", active->start_step()},
      {"warmup_steps", options.warmup_steps},
      {"measured_steps", metrics.measured_steps()},
      {"eval_loss", result.eval_loss},
      {"utilization", metrics.utilization()},
      {"throughput", metrics.throughput()},
      {"compute_s", metrics.compute_s()},
      {"wall_s", metrics.wall_s()},
      {"bytes_sent", metrics.bytes_sent()},
      {"bytes_received", metrics.bytes_received()},
      {"device", "cuda"},
      {"timing", "cuda_events"},
      {"emulated", false},
      {"gpu", device},
      {"gpu_name", gpu_name},
      {"host_staging", staging != nullptr},
      {"utilization_check", nvml_utilization.ok() ? "nvml" : "none"},
  };
  if (nvml_utilization.ok()) {
    result.final_record["nvml_utilization"] = *nvml_utilization;
  }
  return result;
}

}  // namespace ringside
