// The equivalence oracle for fusion (the Horovod-style runtime over Gloo):
// N in {1, 2, 4} workers of batch b against one worker of batch N*b, with
// fusion on and off, the fusion buffer in use, and the response cache on
// and off; every rank ends with bit-identical parameters.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "collectives/fusion/fusion_options.h"
#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

struct Case {
  std::string name;
  int workers;
  int64_t threshold_bytes;
  bool in_place;
  int cache_capacity;
  std::string optimizer;
};

class FusionOracleTest : public ::testing::TestWithParam<Case> {};

TEST_P(FusionOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const Case& c = GetParam();
  OracleSetup setup;
  setup.optimizer.type = c.optimizer;
  FusionOptions fusion;
  fusion.fusion_threshold_bytes = c.threshold_bytes;
  fusion.in_place_contiguous = c.in_place;
  fusion.cache_capacity = c.cache_capacity;
  setup.sync.strategy.Set(fusion);
  absl::StatusOr<TrainResult> reference = RunReference(setup, c.workers);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "fusion", c.workers);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    Workers, FusionOracleTest,
    ::testing::Values(Case{"one_worker", 1, 64 << 20, true, 1024, "sgd"},
                      Case{"two_workers", 2, 64 << 20, true, 1024, "sgd"},
                      Case{"four_workers_adam", 4, 64 << 20, true, 1024,
                           "adam"},
                      Case{"fusion_off", 2, 0, true, 1024, "sgd"},
                      // Smaller than the MLP's largest tensor (24x16 floats).
                      Case{"buffer_copies_small_buffer", 4, 1024, false, 1024,
                           "sgd"},
                      Case{"no_cache", 2, 64 << 20, false, 0, "adam"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(FusionStrategyTest, SeveralWorkersNeedAStore) {
  absl::StatusOr<std::unique_ptr<SyncStrategy>> fusion =
      StrategyRegistry::Create("fusion");
  ASSERT_TRUE(fusion.ok());
  std::vector<float> params(10), grads(10);
  SyncContext context;
  context.rank = 0;
  context.world_size = 2;
  context.layout = *TensorLayout::FromShapes({{"w", {10}}});
  context.params = absl::MakeSpan(params);
  context.grads = absl::MakeSpan(grads);
  absl::Status s = (*fusion)->Init(context);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("MASTER_ADDR"), std::string::npos) << s;
}

TEST(FusionStrategyTest, BadKnobsAreRejectedAtInit) {
  absl::StatusOr<std::unique_ptr<SyncStrategy>> fusion =
      StrategyRegistry::Create("fusion");
  ASSERT_TRUE(fusion.ok());
  std::vector<float> params(10), grads(10);
  SyncContext context;
  context.layout = *TensorLayout::FromShapes({{"w", {10}}});
  context.params = absl::MakeSpan(params);
  context.grads = absl::MakeSpan(grads);
  FusionOptions options;
  options.fusion_threshold_bytes = 6;
  context.options.strategy.Set(options);
  absl::Status s = (*fusion)->Init(context);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("fusion_threshold_bytes"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside::testing
