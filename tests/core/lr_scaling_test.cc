#include "core/lr_scaling.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ringside {
namespace {

TEST(LrScalingTest, RulesScaleFromTheReferenceBatch) {
  // 4 workers x batch 32 x 2 accumulated passes against a reference of 32.
  EXPECT_FLOAT_EQ(*ScaledLr(0.05f, LrScaling::kNone, 256, 32), 0.05f);
  EXPECT_FLOAT_EQ(*ScaledLr(0.05f, LrScaling::kLinear, 256, 32), 0.4f);
  EXPECT_FLOAT_EQ(*ScaledLr(0.05f, LrScaling::kSqrt, 256, 32),
                  static_cast<float>(0.05f * std::sqrt(8.0)));
  // The reference batch itself keeps the rate.
  EXPECT_FLOAT_EQ(*ScaledLr(0.05f, LrScaling::kLinear, 32, 32), 0.05f);
  EXPECT_FLOAT_EQ(*ScaledLr(0.05f, LrScaling::kSqrt, 32, 32), 0.05f);
}

TEST(LrScalingTest, NamesRoundTripAndUnknownOnesAreRefused) {
  for (LrScaling rule :
       {LrScaling::kNone, LrScaling::kLinear, LrScaling::kSqrt}) {
    EXPECT_EQ(*ParseLrScaling(LrScalingName(rule)), rule);
  }
  absl::StatusOr<LrScaling> bad = ParseLrScaling("cubic");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cubic"), std::string::npos);
  EXPECT_NE(bad.status().message().find("linear"), std::string::npos);
}

TEST(LrScalingTest, BatchesMustBePositive) {
  EXPECT_EQ(ScaledLr(0.05f, LrScaling::kLinear, 0, 32).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ScaledLr(0.05f, LrScaling::kLinear, 64, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside
