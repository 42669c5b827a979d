// CudaMlp without --config=cuda: says why there is no CUDA model.
#include "models/cuda/cuda_mlp.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<CudaMlp>> CudaMlp::Create(
    std::vector<int64_t> /*widths*/, int /*device*/,
    Precision /*precision*/) {
  return absl::UnimplementedError(
      "CudaMlp: built without CUDA (bazel build --config=cuda)");
}

}  // namespace ringside
