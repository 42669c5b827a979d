// GradientReadyTimes: mean ready times over the measured steps, in the
// order the gradients became ready, with their bytes.
#include "worker/gradient_ready_times.h"

#include "gtest/gtest.h"

namespace ringside {
namespace {

TensorLayout TwoTensors() {
  absl::StatusOr<TensorLayout> layout =
      TensorLayout::FromShapes({{"w", {4, 8}}, {"b", {8}}});
  EXPECT_TRUE(layout.ok()) << layout.status();
  return *layout;
}

TEST(GradientReadyTimesTest, AveragesMeasuredStepsInReadyOrder) {
  const TensorLayout layout = TwoTensors();
  GradientReadyTimes times(layout);
  times.BeginStep(5.0, /*measured=*/false);  // warm-up: not counted
  times.Mark(1, 9.0);
  times.Mark(0, 9.5);
  times.BeginStep(10.0, true);
  times.Mark(1, 10.5);
  times.Mark(0, 10.8);
  times.Mark(0, 11.5);  // a second report of the same step: ignored
  times.BeginStep(20.0, true);
  times.Mark(1, 20.7);
  times.Mark(0, 21.0);
  const nlohmann::json j = times.Json();
  ASSERT_EQ(j["tensors"].size(), 2u);
  EXPECT_EQ(j["tensors"][0]["tensor"], 1);  // the bias first
  EXPECT_EQ(j["tensors"][0]["bytes"], 32);
  EXPECT_NEAR(j["tensors"][0]["ready_s"].get<double>(), 0.6, 1e-9);
  EXPECT_EQ(j["tensors"][1]["tensor"], 0);
  EXPECT_EQ(j["tensors"][1]["bytes"], 128);
  EXPECT_NEAR(j["tensors"][1]["ready_s"].get<double>(), 0.9, 1e-9);
}

TEST(GradientReadyTimesTest, LeavesOutTensorsNotReportedEveryStep) {
  const TensorLayout layout = TwoTensors();
  GradientReadyTimes times(layout);
  EXPECT_TRUE(times.Json().is_null());  // nothing measured
  times.BeginStep(0.0, true);
  times.Mark(0, 1.0);
  times.Mark(1, 0.5);
  times.BeginStep(10.0, true);
  times.Mark(0, 11.0);
  const nlohmann::json j = times.Json();
  ASSERT_EQ(j["tensors"].size(), 1u);
  EXPECT_EQ(j["tensors"][0]["tensor"], 0);
}

}  // namespace
}  // namespace ringside
