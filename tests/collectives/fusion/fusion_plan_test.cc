// Fusion planning: the threshold edges (0 = off, a tensor larger than the
// buffer), batch boundaries, and when a batch is reduced in place.
#include "collectives/fusion/fusion_plan.h"

#include <gtest/gtest.h>

namespace ringside {
namespace {

// Tensors of 10, 20, 30, 40 floats = 40, 80, 120, 160 bytes, back to back.
TensorLayout Layout() {
  return *TensorLayout::FromShapes(
      {{"a", {10}}, {"b", {20}}, {"c", {30}}, {"d", {40}}});
}

std::vector<std::vector<int>> Tensors(const std::vector<FusedBatch>& plan) {
  std::vector<std::vector<int>> out;
  for (const FusedBatch& b : plan) out.push_back(b.tensors);
  return out;
}

TEST(FusionPlanTest, ThresholdZeroIsOneInPlaceBatchPerTensor) {
  const auto plan = PlanFusion(Layout(), {3, 1, 2, 0}, 0, true);
  EXPECT_EQ(Tensors(plan),
            (std::vector<std::vector<int>>{{3}, {1}, {2}, {0}}));
  for (const FusedBatch& b : plan) EXPECT_TRUE(b.in_place);
  EXPECT_EQ(plan[0].offset, 60);
  EXPECT_EQ(plan[0].elements, 40);
}

TEST(FusionPlanTest, EverythingFitsInOneContiguousBatch) {
  const auto plan = PlanFusion(Layout(), {0, 1, 2, 3}, 1 << 20, true);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].elements, 100);
  EXPECT_TRUE(plan[0].in_place);
  EXPECT_EQ(plan[0].offset, 0);
}

TEST(FusionPlanTest, BatchesCloseAtTheThreshold) {
  // 200 bytes: a+b (120) fit, +c (240) does not; c+d (280) does not.
  const auto plan = PlanFusion(Layout(), {0, 1, 2, 3}, 200, true);
  EXPECT_EQ(Tensors(plan), (std::vector<std::vector<int>>{{0, 1}, {2}, {3}}));
  // Exactly the threshold still fits.
  EXPECT_EQ(Tensors(PlanFusion(Layout(), {0, 1, 2}, 240, true)),
            (std::vector<std::vector<int>>{{0, 1, 2}}));
}

TEST(FusionPlanTest, ATensorLargerThanTheBufferGoesAloneInPlace) {
  // d (160 bytes) > 100; a+b (120) > 100 too, so each is alone.
  const auto plan = PlanFusion(Layout(), {0, 3, 1}, 100, true);
  EXPECT_EQ(Tensors(plan), (std::vector<std::vector<int>>{{0}, {3}, {1}}));
  EXPECT_TRUE(plan[1].in_place);
  EXPECT_EQ(plan[1].offset, 60);
}

TEST(FusionPlanTest, NonContiguousBatchesGoThroughTheBuffer) {
  const auto plan = PlanFusion(Layout(), {0, 2}, 1 << 20, true);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_FALSE(plan[0].in_place);
  EXPECT_EQ(plan[0].elements, 40);
}

TEST(FusionPlanTest, ContiguousInAnyOrderIsInPlace) {
  const auto plan = PlanFusion(Layout(), {2, 1}, 1 << 20, true);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_TRUE(plan[0].in_place);
  EXPECT_EQ(plan[0].offset, 10);
  EXPECT_EQ(plan[0].tensors, (std::vector<int>{2, 1}));
}

TEST(FusionPlanTest, InPlaceOffKeepsMultiTensorBatchesInTheBuffer) {
  const auto plan = PlanFusion(Layout(), {0, 1, 3}, 200, false);
  EXPECT_EQ(Tensors(plan), (std::vector<std::vector<int>>{{0, 1}, {3}}));
  EXPECT_FALSE(plan[0].in_place);
  EXPECT_TRUE(plan[1].in_place);  // a single tensor never needs a copy
}

TEST(FusionPlanTest, NothingReadyPlansNothing) {
  EXPECT_TRUE(PlanFusion(Layout(), {}, 100, true).empty());
}

}  // namespace
}  // namespace ringside
