// TrainOnCuda: the training loop of trainer.h (RunTraining) on a CUDA
// worker's backend (CudaBackend, worker/cuda_backend.h): the same data
// slicing, step records and final record as Train, with the model, the
// parameters and the gradients on one GPU; the final record adds the CUDA
// fields ("device":"cuda", "timing":"cuda_events", "gpu", "gpu_name",
// "host_staging", "utilization_check", "nvml_utilization").
//
// Compiles in every build; without --config=cuda it fails at the first
// CUDA call with "built without CUDA: rebuild with --config=cuda".
// Blocking; not thread-safe (one call per worker thread/process, each with
// its own model).
#ifndef RINGSIDE_WORKER_CUDA_TRAINER_H_
#define RINGSIDE_WORKER_CUDA_TRAINER_H_

#include "absl/status/statusor.h"
#include "models/cuda/cuda_model.h"
#include "worker/cuda_backend.h"
#include "worker/trainer.h"

namespace ringside {

// Runs Init, the steps and Shutdown of job.strategy on model.device();
// TrainResult::params are the final parameters copied to the host.
absl::StatusOr<TrainResult> TrainOnCuda(CudaModel& model, const TrainJob& job,
                                        const CudaTrainOptions& cuda = {});

}  // namespace ringside

#endif  // RINGSIDE_WORKER_CUDA_TRAINER_H_
