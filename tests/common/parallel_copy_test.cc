// ParallelCopy copies every byte at every size (below, at and above the
// thresholds, odd sizes, unaligned ends); CopyThreads follows its rule.
#include "common/parallel_copy.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ringside {
namespace {

TEST(ParallelCopyTest, ThreadsFollowTheRule) {
  const int cores = omp_get_max_threads();
  EXPECT_EQ(CopyThreads(0), 1);
  EXPECT_EQ(CopyThreads((1 << 20) - 1), 1);
  EXPECT_EQ(CopyThreads(int64_t{3} << 20), std::min(3, cores));
  EXPECT_EQ(CopyThreads(int64_t{1} << 40), std::min(kMaxCopyThreads, cores));
}

TEST(ParallelCopyTest, CopiesEveryByte) {
  for (int64_t bytes :
       {int64_t{0}, int64_t{1}, int64_t{(1 << 20) - 1}, int64_t{(2 << 20) + 5},
        int64_t{(3 << 20) + 63}, int64_t{9 << 20}, int64_t{(17 << 20) + 3}}) {
    std::vector<uint8_t> src(bytes), dst(bytes + 1, 0xAB);
    for (int64_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 7);
    ParallelCopy(dst.data(), src.data(), bytes);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << bytes;
    EXPECT_EQ(dst[bytes], 0xAB) << "wrote past the end at " << bytes;
  }
}

}  // namespace
}  // namespace ringside
