// How a GPU test steps aside where it cannot run, and how it refuses to.
//
// SKIP_WITHOUT_GPU(): skips the calling test, with the reason, unless a CUDA
// device can be used: "built without CUDA (...)" in the default build, "no
// GPU here: <the CUDA runtime's message>" on a machine without a GPU or
// driver (CudaDeviceCount of collectives/nccl_collective.h).
// SKIP_WITHOUT_CUDA_BUILD(): likewise, but only in the default build (for
// checks that need the real code, not a GPU).
// SKIP_WITHOUT_GPUS(n): SKIP_WITHOUT_GPU, then skips when the machine has
// fewer than n GPUs (a test of n ranks, one GPU each).
//
// Where the environment sets RINGSIDE_REQUIRE_GPU (to anything but "" or
// "0"; tools/gpu_check.sh does, through bazel's --test_env), the first two
// fail instead of skipping: on a GPU machine a missing CUDA build or an
// unusable driver is a failure, not a pass. Too few GPUs for a multi-rank
// case stays a skip, counted and listed as one.
#ifndef RINGSIDE_TESTS_TESTING_GPU_SKIP_H_
#define RINGSIDE_TESTS_TESTING_GPU_SKIP_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "collectives/nccl_collective.h"

namespace ringside {
namespace testing {

constexpr char kNotBuilt[] =
    "built without CUDA (bazel test --config=cuda on a GPU machine runs this)";
constexpr char kRequireGpuVariable[] = "RINGSIDE_REQUIRE_GPU";

// Whether this binary was built with --config=cuda.
inline bool BuiltWithCuda() {
  return CudaDeviceCount().status().code() != absl::StatusCode::kUnimplemented;
}

// Whether RINGSIDE_REQUIRE_GPU turns the skips above into failures.
inline bool GpuRequired() {
  const char* value = std::getenv(kRequireGpuVariable);
  return value != nullptr && std::string(value) != "" &&
         std::string(value) != "0";
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

// The message of a failure in required mode.
inline std::string RequiredButUnavailable(const std::string& reason) {
  return absl::StrCat(kRequireGpuVariable, " is set, but this test cannot ",
                      "use a GPU: ", reason);
}

}  // namespace testing
}  // namespace ringside

#define RS_GPU_SKIP_OR_FAIL(reason)                                     \
  do {                                                                  \
    const std::string rs_reason = (reason);                             \
    if (!rs_reason.empty()) {                                           \
      if (::ringside::testing::GpuRequired()) {                         \
        GTEST_FAIL() << ::ringside::testing::RequiredButUnavailable(    \
            rs_reason);                                                 \
      }                                                                 \
      GTEST_SKIP() << rs_reason;                                        \
    }                                                                   \
  } while (0)

#define SKIP_WITHOUT_GPU() \
  RS_GPU_SKIP_OR_FAIL(::ringside::testing::GpuUnavailableReason())

#define SKIP_WITHOUT_CUDA_BUILD()                                    \
  RS_GPU_SKIP_OR_FAIL(::ringside::testing::BuiltWithCuda()          \
                          ? std::string()                           \
                          : std::string(::ringside::testing::kNotBuilt))

#define SKIP_WITHOUT_GPUS(n)                                            \
  do {                                                                  \
    SKIP_WITHOUT_GPU();                                                 \
    const int rs_gpus = *::ringside::CudaDeviceCount();                 \
    if (rs_gpus < (n)) {                                                \
      GTEST_SKIP() << "needs " << (n) << " GPUs (one per rank), this "  \
                   << "machine has " << rs_gpus;                        \
    }                                                                   \
  } while (0)

#endif  // RINGSIDE_TESTS_TESTING_GPU_SKIP_H_
