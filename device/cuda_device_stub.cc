// cuda_device.h without --config=cuda: every call says CUDA is not built.
#include "device/cuda_device.h"

namespace ringside {
namespace {

absl::Status NotBuilt() { return BuiltWithoutCudaError("CUDA device"); }

}  // namespace

bool BuiltWithCuda() { return false; }

absl::Status SetCudaDevice(int) { return NotBuilt(); }
absl::StatusOr<std::string> CudaDeviceName(int) { return NotBuilt(); }
absl::StatusOr<std::string> CudaPciBusId(int) { return NotBuilt(); }
absl::StatusOr<int64_t> CudaMemoryInUse(int) { return NotBuilt(); }

}  // namespace ringside
