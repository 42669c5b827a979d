// SKIP_WITHOUT_GPU(): skips the calling test, with the reason, unless a CUDA
// device can be used: "built without CUDA (...)" in the default build, "no
// GPU here: <the CUDA runtime's message>" on a machine without a GPU or
// driver (CudaDeviceCount of collectives/nccl_collective.h).
// SKIP_WITHOUT_CUDA_BUILD(): skips only in the default build (for checks
// that need the real code, not a GPU).
#ifndef RINGSIDE_TESTS_MODELS_CUDA_GPU_SKIP_H_
#define RINGSIDE_TESTS_MODELS_CUDA_GPU_SKIP_H_

#include <gtest/gtest.h>

#include <string>

#include "absl/status/statusor.h"
#include "collectives/nccl_collective.h"

namespace ringside {
namespace testing {

constexpr char kNotBuilt[] =
    "built without CUDA (bazel test --config=cuda on a GPU machine runs this)";

// Whether this binary was built with --config=cuda.
inline bool BuiltWithCuda() {
  return CudaDeviceCount().status().code() != absl::StatusCode::kUnimplemented;
}

// "" when a GPU can be used, else why not.
inline std::string GpuUnavailableReason() {
  absl::StatusOr<int> gpus = CudaDeviceCount();
  if (gpus.ok()) return "";
  if (gpus.status().code() == absl::StatusCode::kUnimplemented) {
    return kNotBuilt;
  }
  return std::string(gpus.status().message());
}

}  // namespace testing
}  // namespace ringside

#define SKIP_WITHOUT_GPU()                                     \
  do {                                                         \
    const std::string rs_gpu_reason =                          \
        ::ringside::testing::GpuUnavailableReason();           \
    if (!rs_gpu_reason.empty()) GTEST_SKIP() << rs_gpu_reason; \
  } while (0)

#define SKIP_WITHOUT_CUDA_BUILD()                     \
  do {                                                \
    if (!::ringside::testing::BuiltWithCuda()) {      \
      GTEST_SKIP() << ::ringside::testing::kNotBuilt; \
    }                                                 \
  } while (0)

#endif  // RINGSIDE_TESTS_MODELS_CUDA_GPU_SKIP_H_
