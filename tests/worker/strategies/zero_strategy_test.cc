// The equivalence oracle for zero1, zero2 and zero3 (ZeRO stages 1-3, Gloo
// on CPU), zero2 and zero3 in both layouts (per unit, the default, and
// contiguous): N in {1, 2, 3, 4} workers of batch b against one worker of
// batch N*b, with SGD + momentum and with Adam; every rank ends with
// bit-identical parameters. N = 3 cuts every unit (and the contiguous
// buffer) into ragged pieces. And what a rank holds and what its rings wait
// on (charlm_oracle_test runs zero3 on the character transformer, one
// unit).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/testing/oracle_harness.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/sharded/zero_options.h"

namespace ringside::testing {
namespace {

using Param = std::tuple<std::string, int, std::string>;

// "zero2_contiguous" runs zero2 with --zero_layout=contiguous;
// "zero3_unit1k" runs zero3 with --zero3_unit_kb=1, "zero3_unit0k" with one
// tensor per unit.
std::string WithLayout(const std::string& name, OracleSetup& setup) {
  ZeroOptions options = setup.sync.strategy.Get<ZeroOptions>();
  const size_t cut = name.find('_');
  if (cut == std::string::npos) return name;
  const std::string variant = name.substr(cut + 1);
  if (variant == "contiguous") {
    options.layout = "contiguous";
  } else if (variant.rfind("unit", 0) == 0) {
    options.zero3_unit_bytes = std::stoll(variant.substr(4)) << 10;
  }
  setup.sync.strategy.Set(options);
  return name.substr(0, cut);
}

class ZeroOracleTest : public ::testing::TestWithParam<Param> {};

TEST_P(ZeroOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [name, n, optimizer] = GetParam();
  OracleSetup setup;
  const std::string strategy = WithLayout(name, setup);
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
    ::testing::Combine(::testing::Values("zero1", "zero2", "zero3",
                                         "zero2_contiguous",
                                         "zero3_contiguous", "zero3_unit1k",
                                         "zero3_unit0k"),
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

// What a zero3 or zero2 rank's rings wait on: per unit, every rank sends
// (n-1)/n of every unit, so ring_critical_bytes is the bytes sent (within
// the ragged pieces' few floats); contiguous, a 16 KiB bucket or unit
// mostly lies in one rank's shard and the rings wait on more.
int64_t CriticalBytes(const std::string& name, int64_t* bytes_sent) {
  OracleSetup setup = DeepMlp();
  // Buckets (zero2) and units (zero3) of about 16 KiB, so that the model
  // is several of them.
  GradientBucketOptions buckets;
  buckets.bucket_bytes = buckets.first_bucket_bytes = int64_t{16} << 10;
  setup.sync.strategy.Set(buckets);
  ZeroOptions units;
  units.zero3_unit_bytes = int64_t{16} << 10;
  setup.sync.strategy.Set(units);
  const std::string strategy = WithLayout(name, setup);
  absl::StatusOr<TrainResult> reference = RunReference(setup, 4);
  EXPECT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, strategy, 4);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok() || !reference.ok()) return -1;
  EXPECT_TRUE(MatchesReference(*run, *reference)) << name;
  const nlohmann::json& f = run->final_records[0];
  *bytes_sent = f["bytes_sent"].get<int64_t>();
  return f["ring_critical_bytes"].get<int64_t>();
}

TEST(ZeroLayoutTest, PerUnitRingsWaitOnTheBytesSentContiguousOnMore) {
  for (const std::string stage : {"zero2", "zero3"}) {
    int64_t sent = 0, contiguous_sent = 0;
    const int64_t per_unit = CriticalBytes(stage, &sent);
    const int64_t contiguous =
        CriticalBytes(stage + "_contiguous", &contiguous_sent);
    EXPECT_EQ(sent, contiguous_sent) << stage;
    EXPECT_GE(per_unit, sent) << stage;
    EXPECT_LE(per_unit, sent + sent / 50) << stage;  // ragged tails only
    EXPECT_GT(contiguous, sent * 13 / 10) << stage;
  }
}

// One tensor per unit: a rank holds its quarter and the few tensors in use.
TEST(Zero3Test, HoldsItsShardAndTheTensorsInUse) {
  OracleSetup setup = DeepMlp();
  ZeroOptions per_tensor;
  per_tensor.zero3_unit_bytes = 0;
  setup.sync.strategy.Set(per_tensor);
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
