// CudaCharLm without --config=cuda: says why there is no CUDA model.
#include "models/transformer/cuda/cuda_charlm.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<CudaCharLm>> CudaCharLm::Create(
    const CharLmConfig& /*config*/, int /*device*/, Precision /*precision*/) {
  return absl::UnimplementedError(
      "CudaCharLm: built without CUDA (bazel build --config=cuda)");
}

}  // namespace ringside
