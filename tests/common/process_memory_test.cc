// RssBytes and PeakRssBytes read this process's VmRSS and VmHWM: touching
// 64 MiB raises both by about that much, and the peak stays once it is
// freed.
#include "common/process_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace ringside {
namespace {

TEST(ProcessMemoryTest, TouchedMemoryShowsInRssAndPeak) {
  const int64_t rss = RssBytes();
  const int64_t before = PeakRssBytes();  // read after: the peak is >= it
  ASSERT_GT(rss, 0);
  ASSERT_GE(before, rss);
  constexpr int64_t kBytes = 64 << 20;
  {
    std::unique_ptr<char[]> block(new char[kBytes]);
    std::memset(block.get(), 1, kBytes);
    EXPECT_GE(RssBytes(), kBytes);
    EXPECT_GE(PeakRssBytes(), before + kBytes / 2);
  }
  EXPECT_GE(PeakRssBytes(), kBytes);
}

}  // namespace
}  // namespace ringside
