// The equivalence oracle for zero1, zero2 and zero3 (ZeRO stages 1-3, Gloo
// on CPU): N in {1, 2, 3, 4} workers of batch b against one worker of batch
// N*b, with SGD + momentum and with Adam; every rank ends with
// bit-identical parameters. N = 3 cuts the flat buffer into shards of
// unequal length. And what a zero3 rank holds
// (charlm_oracle_test runs zero3 on the character transformer, one unit).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/testing/oracle_harness.h"
#include "worker/strategies/allreduce/bucket_options.h"

namespace ringside::testing {
namespace {

using Param = std::tuple<std::string, int, std::string>;

class ZeroOracleTest : public ::testing::TestWithParam<Param> {};

TEST_P(ZeroOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [strategy, n, optimizer] = GetParam();
  OracleSetup setup;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, strategy, n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    StagesWorkersOptimizers, ZeroOracleTest,
    ::testing::Combine(::testing::Values("zero1", "zero2", "zero3"),
                       ::testing::Values(1, 2, 3, 4),
                       ::testing::Values("sgd", "adam")),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(std::get<0>(info.param), "_",
                          std::get<1>(info.param), "workers_",
                          std::get<2>(info.param));
    });

// Ten equal hidden layers (64 x 64 weights, 16 KiB each, four pages): no
// tensor is more than a tenth of the model, as in a deep network.
OracleSetup DeepMlp() {
  OracleSetup setup;
  setup.model.mlp_widths = {64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 10};
  return setup;
}

TEST(Zero3Test, HoldsItsShardAndTheTensorsInUse) {
  OracleSetup setup = DeepMlp();
  absl::StatusOr<TrainResult> reference = RunReference(setup, 4);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "zero3", 4);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  const int64_t model_bytes =
      4 * static_cast<int64_t>(reference->params.size());
  for (const nlohmann::json& f : run->final_records) {
    // Parameters: this rank's quarter plus the tensor in use and the one
    // prefetched (and the last layer kept for backward): about half.
    const int64_t params = f["param_bytes"].get<int64_t>();
    EXPECT_GE(params, model_bytes / 4 - 8) << f.dump();
    EXPECT_LT(params, model_bytes * 6 / 10) << f.dump();
    // Gradients: the quarter, plus every gradient written and not yet
    // reduce-scattered (on this small model backward outruns them).
    const int64_t grads = f["grad_bytes"].get<int64_t>();
    EXPECT_GE(grads, model_bytes / 4 - 8) << f.dump();
    EXPECT_LE(grads, model_bytes) << f.dump();
    // Momentum for a quarter of the model.
    EXPECT_LE(f["optimizer_state_bytes"].get<int64_t>(), model_bytes / 4 + 8);
    EXPECT_GT(f["bytes_sent"].get<int64_t>(), 0);
    // Each tensor lies in one or two ranks' shards, so its rings wait on
    // more than the even (n-1)/n share of it: more than bytes_sent.
    EXPECT_GT(f["ring_critical_bytes"].get<int64_t>(),
              f["bytes_sent"].get<int64_t>())
        << f.dump();
  }
}

TEST(Zero2Test, HoldsItsShardOfTheGradientsAndTheWholeParameters) {
  OracleSetup setup = DeepMlp();
  absl::StatusOr<TrainResult> reference = RunReference(setup, 4);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "zero2", 4);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  const int64_t model_bytes =
      4 * static_cast<int64_t>(reference->params.size());
  for (const nlohmann::json& f : run->final_records) {
    EXPECT_EQ(f["param_bytes"].get<int64_t>(), model_bytes) << f.dump();
    // The whole-buffer all-gather is even; the buckets' reduce-scatters
    // are not, so the rings wait on more than the bytes sent.
    EXPECT_GT(f["ring_critical_bytes"].get<int64_t>(),
              f["bytes_sent"].get<int64_t>())
        << f.dump();
    // The quarter, plus the gradients written and not yet reduce-scattered.
    const int64_t grads = f["grad_bytes"].get<int64_t>();
    EXPECT_GE(grads, model_bytes / 4 - 8) << f.dump();
    EXPECT_LE(grads, model_bytes) << f.dump();
  }
}

TEST(Zero2Test, AnyBucketingMatches) {
  // One bucket per tensor, and buckets of about 16 KiB (several tensors).
  for (const int64_t cap : {int64_t{0}, int64_t{16} << 10}) {
    OracleSetup setup = DeepMlp();
    GradientBucketOptions buckets;
    buckets.bucket_bytes = cap;
    buckets.first_bucket_bytes = cap;
    setup.sync.strategy.Set(buckets);
    absl::StatusOr<TrainResult> reference = RunReference(setup, 3);
    ASSERT_TRUE(reference.ok()) << reference.status();
    absl::StatusOr<OracleRun> run = RunWorkers(setup, "zero2", 3);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_TRUE(MatchesReference(*run, *reference)) << "cap " << cap;
  }
}

}  // namespace
}  // namespace ringside::testing
