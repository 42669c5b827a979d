// CudaOptimizer without --config=cuda: says why there is no device optimizer.
#include "models/cuda/cuda_optimizer.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<CudaOptimizer>> CudaOptimizer::Create(
    const OptimizerConfig& /*config*/, int64_t /*num_elements*/,
    int /*device*/) {
  return absl::UnimplementedError(
      "CudaOptimizer: built without CUDA (bazel build --config=cuda)");
}

}  // namespace ringside
