// Stands in for a CUDA-only test in a build without --config=cuda, so
// `bazel test //...` reports it as skipped, with the reason, not passed.
#include <gtest/gtest.h>

TEST(BuiltWithoutCuda, Skipped) {
  GTEST_SKIP() << "built without --config=cuda; this test needs the CUDA "
                  "toolkit (run: bazel test --config=cuda ...)";
}
