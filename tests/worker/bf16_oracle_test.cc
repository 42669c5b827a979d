// bf16's arithmetic under the equivalence oracle, on the CPU (the CPU
// models in Precision::kBf16 round every product's operands as the CUDA
// models do; models/precision.h). What it measures sets the tolerances of
// the GPU's bf16 oracle (cuda_oracle_test.cc, CudaBf16OracleTest):
//   - how far the oracle's run in bf16 ends from the same run in float32
//     (the reference with batch N*b, 8 steps of SGD with momentum): the
//     GPU's bf16 against the float32 reference;
//   - how far N bf16 workers end from the bf16 reference: the strategies
//     sum the same rounded products in another order, as the GPU's bf16
//     does against the CPU's.
// Each case prints what it measured.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

// The GPU oracle's bounds, from the figures these tests print: bf16 ends
// 1.7e-3 (batch 8) and 3.6e-3 (batch 16) from float32 (relative L2 of the
// parameters), so 1e-2; N bf16 workers end 3.7e-9 from the bf16 reference
// (the same rounded products summed in another order), and the GPU's
// cuBLAS order moves one step's gradients as a one-ulp nudge does (the
// model tests: nothing at this model's widths, up to 1.2e-3 at 784-512-
// 512-10), which the parameters after 8 steps feel far less, so 1e-3.
constexpr double kBf16VsFloat32 = 1e-2;
constexpr double kBf16VsBf16 = 1e-3;

OracleSetup Bf16Setup() {
  OracleSetup setup;
  setup.model.precision = Precision::kBf16;
  return setup;
}

OracleRun AsRun(const TrainResult& result) {
  OracleRun run;
  run.params = {result.params};
  run.eval_loss = {result.eval_loss};
  return run;
}

TEST(Bf16OracleTest, Bf16EndsWithinTheGpuOraclesToleranceOfFloat32) {
  for (int workers : {1, 2}) {
    absl::StatusOr<TrainResult> fp32 = RunReference(OracleSetup(), workers);
    absl::StatusOr<TrainResult> bf16 = RunReference(Bf16Setup(), workers);
    ASSERT_TRUE(fp32.ok() && bf16.ok());
    const double distance = RelativeL2(bf16->params, fp32->params);
    std::printf(
        "cpu oracle, batch %d x 8: bf16 ends %.3g (relative L2) from "
        "float32, eval loss %.6g against %.6g\n",
        workers * 8, distance, bf16->eval_loss, fp32->eval_loss);
    EXPECT_GT(distance, 0.0) << "bf16 did not round";
    EXPECT_TRUE(MatchesReference(AsRun(*bf16), *fp32, kBf16VsFloat32));
  }
}

struct Case {
  std::string strategy;
  int workers;
  int servers;
};

class Bf16WorkersTest : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16WorkersTest, MatchTheBf16Reference) {
  const Case& c = GetParam();
  OracleSetup setup = Bf16Setup();
  setup.num_servers = c.servers;
  absl::StatusOr<TrainResult> reference = RunReference(setup, c.workers);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, c.strategy, c.workers);
  ASSERT_TRUE(run.ok()) << run.status();
  const double distance = RelativeL2(run->params[0], reference->params);
  std::printf(
      "cpu oracle, %s with %d bf16 workers: %.3g (relative L2) from "
      "the bf16 reference\n",
      c.strategy.c_str(), c.workers, distance);
  EXPECT_TRUE(MatchesReference(*run, *reference, kBf16VsBf16));
}

INSTANTIATE_TEST_SUITE_P(Strategies, Bf16WorkersTest,
                         ::testing::Values(Case{"baseline", 1, 0},
                                           Case{"sps", 2, 1},
                                           Case{"ring", 2, 0},
                                           Case{"dps", 2, 2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return absl::StrCat(info.param.strategy, "_",
                                               info.param.workers, "workers");
                         });

}  // namespace
}  // namespace ringside::testing
