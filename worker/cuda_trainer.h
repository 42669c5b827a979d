// TrainOnCuda: the training loop of trainer.h for a CUDA worker. Same data
// slicing, step records and final record as Train, with the model, the
// parameters and the gradients on one GPU:
//
//   - parameters and gradients are flat device buffers (DeviceBuffer) of
//     the CudaModel's layout (CudaMlp or CudaCharLm); the model runs on a
//     compute stream of its own
//     and reports gradient i as QUEUED (SyncContext::grad_ready_event(i)
//     says when it is final);
//   - a strategy with SupportsDevice(kCuda) (baseline, ring, fusion) gets
//     the device buffers (NCCL and the optimizer on the GPU); any other
//     (sps, dps) runs through HostStagingStrategy (pinned host copies);
//   - compute time per step = the model's kernel time from CUDA events
//     (CudaModel::last_compute_seconds) + the strategy's local optimizer time
//     (device time for the CUDA optimizer), so the final record says
//     "device":"cuda", "timing":"cuda_events"; with NVML available
//     (libnvidia-ml.so.1) it adds "nvml_utilization", the mean NVML GPU
//     utilization over the measured steps, and "utilization_check":"nvml"
//     ("none" otherwise); also "gpu" (device index), "gpu_name" and
//     "host_staging".
//
// Compiles in every build; without --config=cuda it fails at the first
// CUDA call with "built without CUDA: rebuild with --config=cuda".
// Blocking; not thread-safe (one call per worker thread/process, each with
// its own model).
#ifndef RINGSIDE_WORKER_CUDA_TRAINER_H_
#define RINGSIDE_WORKER_CUDA_TRAINER_H_

#include "absl/status/statusor.h"
#include "common/launch_env.h"
#include "models/cuda/cuda_model.h"
#include "models/dataset.h"
#include "worker/sync_strategy.h"
#include "worker/trainer.h"

namespace ringside {

struct CudaTrainOptions {
  // Sample NVML over the measured steps when libnvidia-ml.so.1 loads.
  bool nvml = true;
};

// Runs Init, the steps and Shutdown of `strategy` on model.device();
// `on_record` (may be empty) receives each step record. TrainResult::params
// are the final parameters copied to the host.
absl::StatusOr<TrainResult> TrainOnCuda(
    CudaModel& model, Dataset& dataset, SyncStrategy& strategy,
    const RankInfo& rank, const OptimizerConfig& optimizer,
    const SyncOptions& sync, const TrainerOptions& options,
    const RecordFn& on_record, const CudaTrainOptions& cuda = {});

}  // namespace ringside

#endif  // RINGSIDE_WORKER_CUDA_TRAINER_H_
