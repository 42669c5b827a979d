// baseline: the reference itself; it must train (loss falls) and refuse
// more than one worker.
#include <gtest/gtest.h>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

TEST(BaselineStrategyTest, TrainingLowersEvalLoss) {
  OracleSetup setup;
  setup.steps = 1;
  absl::StatusOr<TrainResult> early = RunReference(setup, 1);
  setup.steps = 60;
  absl::StatusOr<TrainResult> late = RunReference(setup, 1);
  ASSERT_TRUE(early.ok() && late.ok());
  EXPECT_LT(late->eval_loss, 0.8 * early->eval_loss);
}

TEST(BaselineStrategyTest, RefusesSeveralWorkers) {
  OracleSetup setup;
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "baseline", 2);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside::testing
