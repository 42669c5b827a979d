// The cost model's outputs: the sweep over worker counts, the memory per
// rank, the prediction error, and the Markdown and JSON of predictions.
#include "experiments/cost/cost_model.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(CostModelTest, SweepDoublesWorkersUpToTheMaximum) {
  absl::StatusOr<std::vector<Prediction>> all =
      PredictSweep(CostModelStrategies(), Round(), 1024);
  ASSERT_TRUE(all.ok()) << all.status();
  // baseline once + 17 strategies × n ∈ {1, 2, 4, ..., 1024} (11 values).
  ASSERT_EQ(all->size(), 1u + 17 * 11);
  EXPECT_EQ((*all)[0].strategy, "baseline");
  EXPECT_EQ((*all)[1].strategy, "sps");
  EXPECT_EQ((*all)[1].workers, 1);
  EXPECT_EQ((*all)[11].workers, 1024);
  EXPECT_EQ(all->back().strategy, "byteps");
  EXPECT_EQ(all->back().workers, 1024);
  // The sweep's K stays the inputs' K.
  EXPECT_EQ((*all)[12].strategy, "dps");
  EXPECT_EQ((*all)[12].servers, 2);

  // A maximum that is not a power of two ends the sweep: 1, 2, 4, 6.
  absl::StatusOr<std::vector<Prediction>> six =
      PredictSweep({"ring"}, Round(), 6);
  ASSERT_TRUE(six.ok()) << six.status();
  std::vector<int64_t> ns;
  for (const Prediction& p : *six) ns.push_back(p.workers);
  EXPECT_EQ(ns, (std::vector<int64_t>{1, 2, 4, 6}));

  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictSweep({"ring"}, Round(), 0).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictSweep({"nope"}, Round(), 4).status()));
}

TEST(CostModelTest, MemoryPerRankFollowsZeroAccounting) {
  // P = 1e9, n = 4, K = 2; Adam (s = 2): plain data parallel 4P, stage 1
  // 2P + 2P/n, stage 2 P + 3P/n (Rajbhandari et al.'s figures), servers
  // (2 + s)P/K, workers of the parameter servers 2P.
  CostInputs in = Round();
  in.optimizer_state_per_param = 2;
  EXPECT_NEAR(Predict("ring", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("fusion", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("baseline", in).worker_memory_bytes, 4e9, 1);
  EXPECT_NEAR(Predict("zero1", in).worker_memory_bytes, 2.5e9, 1);
  EXPECT_NEAR(Predict("zero2", in).worker_memory_bytes, 1.75e9, 1);
  EXPECT_NEAR(Predict("zero3", in).worker_memory_bytes, 1e9, 1);  // 4P/n
  EXPECT_NEAR(Predict("ring", in).server_memory_bytes, 0, 1);
  EXPECT_NEAR(Predict("sps", in).worker_memory_bytes, 2e9, 1);
  EXPECT_NEAR(Predict("sps", in).server_memory_bytes, 4e9, 1);  // K = 1
  EXPECT_NEAR(Predict("dps", in).server_memory_bytes, 2e9, 1);  // 4P / 2
  // SGD with momentum (s = 1): ring 3P, zero1 2P + P/4.
  in.optimizer_state_per_param = 1;
  EXPECT_NEAR(Predict("ring", in).worker_memory_bytes, 3e9, 1);
  EXPECT_NEAR(Predict("zero1", in).worker_memory_bytes, 2.25e9, 1);

  EXPECT_EQ(MemoryFormula("zero2"), "P + (1 + s)·P/n");
  EXPECT_EQ(MemoryFormula("nope"), "");
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("nope", 1e9, 1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("ring", 0, 1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("ring", 1e9, -1, 4, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("dps", 1e9, 1, 0, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictMemory("dps", 1e9, 1, 4, 0).status()));
  in.optimizer_state_per_param = std::nan("");
  EXPECT_THAT(std::string(ValidateCostInputs(in).message()),
              HasSubstr("optimizer_state_per_param"));
}

TEST(CostModelTest, PredictionErrorIsRelativeToTheMeasurement) {
  // (1.1 − 1.0) / 1.0 = +0.1 (over-predicts); (0.9 − 1.2) / 1.2 = −0.25.
  EXPECT_NEAR(*PredictionError(1.1, 1.0), 0.1, kEps);
  EXPECT_NEAR(*PredictionError(0.9, 1.2), -0.25, kEps);
  EXPECT_NEAR(*PredictionError(2.0, 2.0), 0.0, kEps);
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(1.0, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(1.0, -1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PredictionError(-1.0, 1).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PredictionError(std::nan(""), 1.0).status()));
}

TEST(CostModelTest, MarkdownAndJsonCarryEveryPrediction) {
  absl::StatusOr<std::vector<Prediction>> all =
      PredictSweep({"baseline", "ring"}, Round(), 4);
  ASSERT_TRUE(all.ok()) << all.status();
  const std::string md = PredictionsMarkdown(*all);
  // Ring at n = 4: speedup 1.5625 → "1.56", efficiency 0.390625 → "0.39";
  // step 2560 ms, utilization 39.1%.
  EXPECT_THAT(md, HasSubstr("1.56 (0.39)"));
  EXPECT_THAT(md, HasSubstr("| ring     |     4 |  2560.000 |"));
  EXPECT_THAT(md, HasSubstr("39.1%"));
  EXPECT_THAT(md, HasSubstr("| baseline |     1 |  1000.000 |"));

  const nlohmann::json j = PredictionsJson(Round(), *all);
  ASSERT_EQ(j["predictions"].size(), all->size());  // 1 + 3
  EXPECT_EQ(j["predictions"][3]["strategy"], "ring");
  EXPECT_EQ(j["predictions"][3]["workers"], 4);
  EXPECT_NEAR(j["predictions"][3]["step_s"].get<double>(), 2.56, kEps);
  // s = 1 by default: ring holds (2 + 1)·P = 3e9 bytes per worker.
  EXPECT_NEAR(j["predictions"][3]["worker_memory_bytes"].get<double>(), 3e9, 1);
  EXPECT_THAT(md, HasSubstr("|          3000.0 |               - |"));
  EXPECT_THAT(md, HasSubstr("ring (2 + s)·P"));
  EXPECT_EQ(j["inputs"]["optimizer_state_per_param"], 1.0);
  EXPECT_EQ(j["inputs"]["servers"], 2);
  EXPECT_EQ(j["inputs"]["bandwidth_Bps"], 1e9);
}

}  // namespace
}  // namespace ringside
