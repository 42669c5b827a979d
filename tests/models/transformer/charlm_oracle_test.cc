// The equivalence oracle with the character transformer: N = 2 workers of
// batch b under sps, dps (2 servers), ring and fusion end with the
// parameters of one worker of batch 2b on the same data order, to float32
// rounding, with SGD + momentum and with Adam. A small model on the
// built-in synthetic text keeps it fast.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

OracleSetup CharLmSetup(const std::string& optimizer) {
  OracleSetup setup;
  setup.model.name = "charlm";
  setup.model.charlm.n_layer = 2;
  setup.model.charlm.n_head = 2;
  setup.model.charlm.n_embd = 16;
  setup.model.charlm.block_size = 8;
  setup.model.charlm.synthetic_chars = 4000;
  setup.model.eval_examples = 16;
  setup.batch_size = 4;
  setup.steps = 6;
  setup.optimizer.type = optimizer;
  setup.optimizer.lr = optimizer == "adam" ? 0.01f : 0.3f;
  return setup;
}

class CharLmOracleTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(CharLmOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [strategy, optimizer] = GetParam();
  constexpr int kWorkers = 2;
  OracleSetup setup = CharLmSetup(optimizer);
  setup.num_servers = strategy == "sps" ? 1 : strategy == "dps" ? 2 : 0;
  absl::StatusOr<TrainResult> reference = RunReference(setup, kWorkers);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, strategy, kWorkers);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  // The run moved away from one step's parameters (the test can fail).
  OracleSetup fresh = setup;
  fresh.steps = 1;
  absl::StatusOr<TrainResult> one_step = RunReference(fresh, kWorkers);
  ASSERT_TRUE(one_step.ok());
  EXPECT_GT(RelativeL2(one_step->params, reference->params), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndOptimizers, CharLmOracleTest,
                         ::testing::Combine(::testing::Values("sps", "dps",
                                                              "ring", "fusion"),
                                            ::testing::Values("sgd", "adam")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::get<1>(info.param);
                         });

// The reference itself learns: eval loss after training is below the
// untrained loss (close to log(vocab)).
TEST(CharLmOracleTest, ReferenceLowersEvalLoss) {
  OracleSetup setup = CharLmSetup("adam");
  setup.steps = 1;
  absl::StatusOr<TrainResult> start = RunReference(setup, 1);
  setup.steps = 40;
  absl::StatusOr<TrainResult> trained = RunReference(setup, 1);
  ASSERT_TRUE(start.ok() && trained.ok());
  EXPECT_LT(trained->eval_loss, start->eval_loss - 0.2)
      << "start " << start->eval_loss << " trained " << trained->eval_loss;
}

}  // namespace
}  // namespace ringside::testing
