#include "experiments/report/loss_curves.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using nlohmann::json;

json Eval(int64_t step, int64_t samples, double wall_s, double loss) {
  return {{"event", "eval"},        {"rank", 0},
          {"step", step},           {"samples", samples},
          {"train_wall_s", wall_s}, {"loss", loss}};
}

// A row of `strategy` at n workers whose curve has these (wall s, loss)
// points, one every 5 steps of 64 global samples each.
ReportRow CurveRow(const std::string& strategy, int n,
                   const std::vector<std::pair<double, double>>& points) {
  ReportRow row = testing::NamedRow(strategy);
  row.utilization.assign(n, 0.5);
  int64_t step = 4;
  for (const auto& [wall_s, loss] : points) {
    row.curve.push_back({step, (step + 1) * 64, wall_s, loss});
    step += 5;
  }
  return row;
}

TEST(LossCurvesTest, EvalCurveTakesTheEvalRecordsInStepOrder) {
  ReportRow row = testing::NamedRow("sps");
  const std::vector<json> records = {
      {{"event", "step"}, {"step", 0}, {"loss", 9.0}},
      Eval(9, 640, 0.9, 1.5),
      Eval(4, 320, 0.5, 2.0),
      {{"event", "eval"}, {"step", 14}, {"samples", 960}},  // no loss
      {{"event", "eval"},
       {"step", 19},
       {"samples", 1280},
       {"train_wall_s", "soon"},
       {"loss", 1.0}},
      {{"event", "final"}, {"eval_loss", 1.2}}};
  SetEvalCurve(records, &row);
  ASSERT_EQ(row.curve.size(), 2u);
  EXPECT_EQ(row.curve[0].step, 4);
  EXPECT_EQ(row.curve[0].samples, 320);
  EXPECT_DOUBLE_EQ(row.curve[0].train_wall_s, 0.5);
  EXPECT_DOUBLE_EQ(row.curve[0].loss, 2.0);
  EXPECT_EQ(row.curve[1].step, 9);
  EXPECT_DOUBLE_EQ(row.curve[1].loss, 1.5);
  EXPECT_TRUE(IsEvalRecord(Eval(0, 1, 0, 1)));
  EXPECT_FALSE(IsEvalRecord(records[0]));
  EXPECT_FALSE(IsEvalRecord(json("eval")));
}

TEST(LossCurvesTest, EmulatedRowsHaveNoCurve) {
  ReportRow row = testing::NamedRow("sps");
  row.emulated = true;
  row.curve = {{0, 1, 0.1, 3.0}};
  SetEvalCurve({Eval(4, 320, 0.5, 2.0)}, &row);
  EXPECT_TRUE(row.curve.empty());
}

// The default target is the largest of the per-run lowest losses: the run
// that got least far (ring: 1.3) reaches it, so every run does.
TEST(LossCurvesTest, TargetIsTheLargestOfThePerRunMinima) {
  const std::vector<ReportRow> rows = {
      CurveRow("baseline", 1, {{0.5, 2.0}, {1.0, 1.2}, {1.5, 1.25}}),
      CurveRow("ring", 2, {{0.3, 1.8}, {0.6, 1.3}}),
      testing::NamedRow("sps"),  // no curve: not counted
      CurveRow("dps", 2, {{0.4, 1.1}, {0.8, 0.9}})};
  const std::optional<TargetLoss> target = ChooseTargetLoss(rows, 0);
  ASSERT_TRUE(target.has_value());
  EXPECT_DOUBLE_EQ(target->loss, 1.3);
  EXPECT_FALSE(target->given);
  EXPECT_EQ(TargetLossLine(*target),
            "Target loss 1.3000 (reached by every run; --target_loss sets it)");
  EXPECT_EQ(TargetLossJson(target),
            json({{"loss", 1.3}, {"source", "reached by every run"}}));
}

// With a test for exact rows, only they set the target: the lossy row that
// got least far (1.6) does not; it is still timed against the target.
TEST(LossCurvesTest, OnlyExactRowsSetTheTarget) {
  std::vector<ReportRow> rows = {
      CurveRow("baseline", 1, {{0.5, 2.0}, {1.0, 1.2}}),
      CurveRow("ring", 2, {{0.3, 1.8}, {0.6, 1.3}}),
      CurveRow("ring_powersgd", 2, {{0.2, 1.9}, {0.4, 1.6}})};
  const auto exact = [](const ReportRow& r) {
    return r.strategy != "ring_powersgd";
  };
  const std::optional<TargetLoss> target = ChooseTargetLoss(rows, 0, exact);
  ASSERT_TRUE(target.has_value());
  EXPECT_DOUBLE_EQ(target->loss, 1.3);
  EXPECT_TRUE(target->exact_only);
  EXPECT_THAT(TargetLossLine(*target),
              ::testing::HasSubstr("reached by every exact run; lossy and "
                                   "stale runs do not set it"));
  EXPECT_EQ(TargetLossJson(target)["source"], "reached by every exact run");
  SetTimesToTarget(target, &rows);
  EXPECT_EQ(rows[2].time_to_target_s, std::nullopt);  // never got to 1.3
  // Without the test every row counts: the lossy one sets 1.6.
  EXPECT_DOUBLE_EQ(ChooseTargetLoss(rows, 0)->loss, 1.6);
  // No exact row with a curve: no target.
  EXPECT_FALSE(ChooseTargetLoss({rows[2]}, 0, exact).has_value());
}

TEST(LossCurvesTest, GivenTargetWins) {
  const std::vector<ReportRow> rows = {
      CurveRow("ring", 2, {{0.3, 1.8}, {0.6, 1.3}})};
  const std::optional<TargetLoss> target = ChooseTargetLoss(rows, 1.5);
  ASSERT_TRUE(target.has_value());
  EXPECT_DOUBLE_EQ(target->loss, 1.5);
  EXPECT_TRUE(target->given);
  EXPECT_EQ(TargetLossLine(*target), "Target loss 1.5000 (--target_loss)");
  EXPECT_EQ(TargetLossJson(target)["source"], "given");
}

TEST(LossCurvesTest, NoTargetWithoutCurves) {
  const std::vector<ReportRow> rows = {testing::NamedRow("baseline"),
                                       testing::NamedRow("sps")};
  EXPECT_FALSE(ChooseTargetLoss(rows, 0).has_value());
  EXPECT_FALSE(ChooseTargetLoss(rows, 1.5).has_value());
  EXPECT_TRUE(TargetLossJson(std::nullopt).is_null());
}

// The first evaluation at or below the target counts, even when the loss
// rises again later.
TEST(LossCurvesTest, TimeToTargetIsTheFirstCrossing) {
  const ReportRow row =
      CurveRow("ring", 2, {{0.5, 2.0}, {1.0, 1.4}, {1.5, 1.6}, {2.0, 1.1}});
  EXPECT_EQ(TimeToTarget(row, 1.5), std::optional<double>(1.0));
  EXPECT_EQ(TimeToTarget(row, 1.4), std::optional<double>(1.0));  // equal
  EXPECT_EQ(TimeToTarget(row, 1.2), std::optional<double>(2.0));
  EXPECT_EQ(TimeToTarget(row, 1.0), std::nullopt);  // never
  EXPECT_EQ(TimeToTarget(testing::NamedRow("sps"), 9.0), std::nullopt);
}

TEST(LossCurvesTest, SetTimesToTargetPerRow) {
  std::vector<ReportRow> rows = {
      CurveRow("baseline", 1, {{0.5, 2.0}, {1.0, 1.2}}),
      CurveRow("ring", 2, {{0.3, 1.8}, {0.6, 1.3}}), testing::NamedRow("sps")};
  SetTimesToTarget(ChooseTargetLoss(rows, 0), &rows);  // 1.3
  EXPECT_EQ(rows[0].time_to_target_s, std::optional<double>(1.0));
  EXPECT_EQ(rows[1].time_to_target_s, std::optional<double>(0.6));
  EXPECT_EQ(rows[2].time_to_target_s, std::nullopt);
  SetTimesToTarget(TargetLoss{1.25, true}, &rows);
  EXPECT_EQ(rows[0].time_to_target_s, std::optional<double>(1.0));
  EXPECT_EQ(rows[1].time_to_target_s, std::nullopt);  // stops at 1.3
  SetTimesToTarget(std::nullopt, &rows);
  EXPECT_EQ(rows[0].time_to_target_s, std::nullopt);
}

TEST(LossCurvesTest, EverySeedsCurveSetsTheTargetAndTheRowTakesTheMedian) {
  ReportRow ring = CurveRow("ring", 2, {{0.5, 1.8}, {1.0, 1.2}});
  // Three seeds: the third reaches only 1.4, so every exact run reaches
  // 1.4; the lossy row's seeds reach it at 0.8 s, never and 0.4 s.
  ring.seed_runs = {{1, 1.2, ring.curve, std::nullopt},
                    {2, 1.3, {{4, 320, 0.6, 1.3}}, std::nullopt},
                    {3, 1.4, {{4, 320, 0.7, 1.4}}, std::nullopt}};
  ReportRow lossy = CurveRow("ring_topk", 2, {{0.8, 1.35}});
  lossy.seed_runs = {{1, 1.35, lossy.curve, std::nullopt},
                     {2, 1.9, {{4, 320, 0.5, 1.9}}, std::nullopt},
                     {3, 1.1, {{4, 320, 0.4, 1.1}}, std::nullopt}};
  std::vector<ReportRow> rows = {ring, lossy};
  const std::optional<TargetLoss> target = ChooseTargetLoss(
      rows, 0, [](const ReportRow& r) { return r.strategy == "ring"; });
  ASSERT_TRUE(target.has_value());
  EXPECT_DOUBLE_EQ(target->loss, 1.4);
  SetTimesToTarget(target, &rows);
  EXPECT_EQ(rows[1].seed_runs[0].time_to_target_s, std::optional<double>(0.8));
  EXPECT_EQ(rows[1].seed_runs[1].time_to_target_s, std::nullopt);
  EXPECT_EQ(rows[1].seed_runs[2].time_to_target_s, std::optional<double>(0.4));
  // Sorted 0.4, 0.8, never: the median is 0.8.
  EXPECT_EQ(rows[1].time_to_target_s, std::optional<double>(0.8));
  // Ring's seeds: 1.0, 0.6, 0.7 s: the median 0.7.
  EXPECT_EQ(rows[0].time_to_target_s, std::optional<double>(0.7));
  // Two of three never: the median is never.
  rows[1].seed_runs[2].curve = {{4, 320, 0.4, 1.5}};
  SetTimesToTarget(target, &rows);
  EXPECT_EQ(rows[1].time_to_target_s, std::nullopt);
}

TEST(LossCurvesTest, LossCurvesCsvOneLinePerPoint) {
  ReportRow async = CurveRow("async_ps", 2, {{0.25, 1.75}});
  async.display_name = "Async PS (τ=2, k)";  // a label that needs quoting
  const std::vector<ReportRow> rows = {
      CurveRow("baseline", 1, {{0.5, 2.0}, {1.0, 1.23456789}}),
      testing::NamedRow("sps"), async};
  EXPECT_EQ(LossCurvesCsv(rows),
            "strategy,parallel_type,workers,step,samples,train_wall_s,loss\n"
            "baseline,Baseline,1,4,320,0.5000,2\n"
            "baseline,Baseline,1,9,640,1.0000,1.23457\n"
            "async_ps,\"Async PS (τ=2, k)\",2,4,320,0.2500,1.75\n");
}

}  // namespace
}  // namespace ringside
