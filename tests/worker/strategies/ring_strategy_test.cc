// The equivalence oracle for ring (Gloo on CPU): N in {1, 2, 4} workers of
// batch b against one worker of batch N*b, for both all-reduce algorithms;
// every rank ends with bit-identical parameters.
#include <gtest/gtest.h>

#include "tests/testing/oracle_harness.h"
#include "worker/strategies/allreduce/bucket_options.h"

namespace ringside::testing {
namespace {

class RingOracleTest
    : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(RingOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [n, algorithm] = GetParam();
  OracleSetup setup;
  setup.sync.allreduce_algorithm = algorithm;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    WorkersAndAlgorithms, RingOracleTest,
    ::testing::Combine(::testing::Values(1, 2, 4),
                       ::testing::Values("ring", "halving_doubling")));

// The final record carries the bucket caps ring ran with (its cost
// formula's bucket count).
TEST(RingStrategyTest, FinalRecordCarriesItsBucketCaps) {
  OracleSetup setup;
  setup.steps = 2;
  GradientBucketOptions buckets;
  buckets.first_bucket_bytes = 1024;
  buckets.bucket_bytes = 4096;
  setup.sync.strategy.Set(buckets);
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "ring", 2);
  ASSERT_TRUE(run.ok()) << run.status();
  for (const nlohmann::json& record : run->final_records) {
    EXPECT_EQ(record["ring_first_bucket_bytes"], 1024) << record.dump();
    EXPECT_EQ(record["ring_bucket_bytes"], 4096) << record.dump();
    EXPECT_FALSE(record.contains("ps_chunk_bytes")) << record.dump();
  }
}

TEST(RingStrategyTest, SeveralWorkersNeedAStore) {
  OracleSetup setup;
  absl::StatusOr<std::unique_ptr<SyncStrategy>> ring =
      StrategyRegistry::Create("ring");
  ASSERT_TRUE(ring.ok());
  std::vector<float> params(10), grads(10);
  SyncContext context;
  context.rank = 0;
  context.world_size = 2;
  context.layout = *TensorLayout::FromShapes({{"w", {10}}});
  context.params = absl::MakeSpan(params);
  context.grads = absl::MakeSpan(grads);
  absl::Status s = (*ring)->Init(context);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("MASTER_ADDR"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside::testing
