// GradientStash on a GPU rounds as the host backend does: Add keeps the
// running sum, Fold gives (g + stash) * (1 / passes) on a tensor's range and
// leaves the rest of the buffer alone, bit for bit against host float
// arithmetic; a bad range is refused. Skips, saying why, without a GPU.
#include "device/gradient_stash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

std::vector<float> Values(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = scale * static_cast<float>((i * 7919) % 1009 - 504) / 37.0f;
  }
  return v;
}

TEST(GradientStashTest, AddAndFoldRoundAsTheHost) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 100003;  // several blocks and a ragged tail
  absl::StatusOr<GradientStash> stash = GradientStash::Create(0, n);
  ASSERT_TRUE(stash.ok()) << stash.status();
  absl::StatusOr<DeviceBuffer> grads = DeviceBuffer::Create(0, n);
  ASSERT_TRUE(grads.ok()) << grads.status();
  const std::vector<float> g0 = Values(n, 1.0f), g1 = Values(n, 0.3f),
                           g2 = Values(n, -1.7f);
  // Passes 0 and 1 stashed, pass 2 folded on [11, 11 + 50000).
  ASSERT_TRUE(grads->CopyFromHost(g0).ok());
  ASSERT_TRUE(stash->Add(grads->data(), /*first=*/true, nullptr).ok());
  ASSERT_TRUE(grads->CopyFromHost(g1).ok());
  ASSERT_TRUE(stash->Add(grads->data(), /*first=*/false, nullptr).ok());
  ASSERT_TRUE(grads->CopyFromHost(g2).ok());
  const int64_t offset = 11, count = 50000;
  ASSERT_TRUE(stash->Fold(grads->data(), offset, count, 3, nullptr).ok());
  ASSERT_TRUE(SynchronizeStream(nullptr).ok());
  absl::StatusOr<std::vector<float>> got = grads->ToHost();
  ASSERT_TRUE(got.ok()) << got.status();
  const float inverse = 1.0f / 3.0f;
  int64_t differing = 0;
  for (int64_t i = 0; i < n; ++i) {
    volatile float sum = g0[i] + g1[i];  // the host's roundings, no FMA
    volatile float folded = g2[i] + sum;
    volatile float want = folded * inverse;
    const float expected = (i >= offset && i < offset + count) ? want : g2[i];
    if ((*got)[i] != expected) ++differing;
  }
  EXPECT_EQ(differing, 0);
}

TEST(GradientStashTest, FoldRefusesARangeOutsideTheStash) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<GradientStash> stash = GradientStash::Create(0, 16);
  ASSERT_TRUE(stash.ok()) << stash.status();
  absl::StatusOr<DeviceBuffer> grads = DeviceBuffer::Create(0, 16);
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ(stash->Fold(grads->data(), 10, 7, 2, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stash->Fold(grads->data(), 0, 4, 0, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside
