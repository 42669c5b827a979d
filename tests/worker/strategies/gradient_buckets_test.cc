// AssignBuckets follows PyTorch DDP's rule on the default MLP's layout and
// degrades to one bucket per tensor with a zero cap.
#include "worker/strategies/allreduce/gradient_buckets.h"

#include "gtest/gtest.h"

namespace ringside {
namespace {

// fc0.weight 64x1024, fc0.bias, fc1.weight 1024x1024, fc1.bias,
// fc2.weight 1024x10, fc2.bias: the default MLP.
TensorLayout Mlp() {
  absl::StatusOr<TensorLayout> layout = TensorLayout::FromShapes(
      {{"fc0.weight", {64, 1024}},
       {"fc0.bias", {1024}},
       {"fc1.weight", {1024, 1024}},
       {"fc1.bias", {1024}},
       {"fc2.weight", {1024, 10}},
       {"fc2.bias", {10}}});
  EXPECT_TRUE(layout.ok());
  return *layout;
}

TEST(GradientBucketsTest, DdpDefaultsGiveTwoBucketsInBackwardOrder) {
  const TensorLayout layout = Mlp();
  const std::vector<GradientBucket> b =
      AssignBuckets(layout, int64_t{1} << 20, int64_t{25} << 20);
  ASSERT_EQ(b.size(), 2u);
  // The first bucket closes once fc1.weight takes it past 1 MiB.
  EXPECT_EQ(b[0].first_tensor, 2);
  EXPECT_EQ(b[0].last_tensor, 5);
  EXPECT_EQ(b[0].offset, layout.tensor(2).offset);
  EXPECT_EQ(b[0].size, layout.total_elements() - layout.tensor(2).offset);
  EXPECT_EQ(b[1].first_tensor, 0);
  EXPECT_EQ(b[1].last_tensor, 1);
  EXPECT_EQ(b[1].offset, 0);
  EXPECT_EQ(b[1].size, layout.tensor(2).offset);
}

TEST(GradientBucketsTest, SmallCapsSplitAndZeroCapIsPerTensor) {
  const TensorLayout layout = Mlp();
  // 40 KiB caps: fc2.bias + fc2.weight reach it; fc1.bias + fc1.weight;
  // fc0.bias + fc0.weight.
  std::vector<GradientBucket> b = AssignBuckets(layout, 40 << 10, 40 << 10);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].first_tensor, 4);
  EXPECT_EQ(b[1].first_tensor, 2);
  EXPECT_EQ(b[2].first_tensor, 0);
  b = AssignBuckets(layout, 1 << 20, 0);
  ASSERT_EQ(b.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(b[i].first_tensor, 5 - i);
    EXPECT_EQ(b[i].last_tensor, 5 - i);
    EXPECT_EQ(b[i].size, layout.tensor(5 - i).size);
  }
}

}  // namespace
}  // namespace ringside
