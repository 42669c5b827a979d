#include "worker/cuda_trainer.h"

namespace ringside {

absl::StatusOr<TrainResult> TrainOnCuda(CudaModel& model, const TrainJob& job,
                                        const CudaTrainOptions& cuda) {
  CudaBackend backend(model, cuda);
  return RunTraining(backend, job);
}

}  // namespace ringside
