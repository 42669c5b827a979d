#include "experiments/report/seed_runs.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

// A row of `strategy` at n workers, one seed run per loss in `losses`
// (seeds 1, 2, ...).
ReportRow SeededRow(const std::string& strategy, int n,
                    const std::vector<double>& losses) {
  std::vector<std::pair<uint64_t, ReportRow>> runs;
  for (size_t i = 0; i < losses.size(); ++i) {
    ReportRow run = testing::NamedRow(strategy);
    run.utilization.assign(n, 0.5);
    run.eval_loss = losses[i];
    run.curve = {{4, 320, 0.1 * (i + 1), losses[i]}};
    runs.emplace_back(i + 1, std::move(run));
  }
  return WithSeedRuns(runs.front().second, runs);
}

TEST(SeedRunsTest, SpreadIsTheLowerMiddleAndTheExtremes) {
  EXPECT_FALSE(SpreadOf({}).has_value());
  const std::optional<ValueSpread> odd = SpreadOf({3.0, 1.0, 2.0});
  ASSERT_TRUE(odd.has_value());
  EXPECT_DOUBLE_EQ(odd->median, 2.0);
  EXPECT_DOUBLE_EQ(odd->low, 1.0);
  EXPECT_DOUBLE_EQ(odd->high, 3.0);
  EXPECT_DOUBLE_EQ(SpreadOf({4.0, 1.0, 3.0, 2.0})->median, 2.0);
}

TEST(SeedRunsTest, RowKeepsEverySeedAndTheMedianLoss) {
  const ReportRow row = SeededRow("ring", 2, {2.6, 2.5, 2.7});
  ASSERT_EQ(row.seed_runs.size(), 3u);
  EXPECT_EQ(row.seed_runs[2].seed, 3u);
  EXPECT_EQ(row.seed_runs[2].eval_loss, std::optional<double>(2.7));
  EXPECT_EQ(row.seed_runs[1].curve.size(), 1u);
  EXPECT_EQ(row.eval_loss, std::optional<double>(2.6));  // the median
  EXPECT_EQ(row.curve.front().loss, 2.6);                // the first seed's
  const std::optional<ValueSpread> spread = SeedLossSpread(row);
  ASSERT_TRUE(spread.has_value());
  EXPECT_DOUBLE_EQ(spread->low, 2.5);
  EXPECT_DOUBLE_EQ(spread->high, 2.7);
}

TEST(SeedRunsTest, OneSeedLeavesTheRowAsItWas) {
  const ReportRow row = SeededRow("ring", 2, {2.6});
  EXPECT_TRUE(row.seed_runs.empty());
  EXPECT_FALSE(SeedLossSpread(row).has_value());
}

TEST(SeedRunsTest, GapIsTakenSeedBySeedAgainstTheExactRowsMean) {
  std::vector<ReportRow> rows = {
      SeededRow("baseline", 1, {9.0, 9.0, 9.0}),  // n = 1: no reference
      SeededRow("ring", 2, {2.0, 3.0, 4.0}),
      SeededRow("fusion", 2, {2.2, 3.2, 4.2}),
      SeededRow("ring_topk", 2, {2.5, 3.4, 4.3}),
      SeededRow("ring_topk", 4, {2.5, 3.4, 4.3}),  // no exact row at n = 4
      SeededRow("sps", 2, {2.1})};                 // one seed
  SetLossGaps(
      [](const ReportRow& r) { return r.strategy != "ring_topk"; }, &rows);
  ASSERT_TRUE(rows[3].loss_gap.has_value());
  // Against the exact mean per seed: 2.1, 3.1, 4.1.
  EXPECT_NEAR(rows[3].loss_gap->low, 0.2, 1e-12);
  EXPECT_NEAR(rows[3].loss_gap->median, 0.3, 1e-12);
  EXPECT_NEAR(rows[3].loss_gap->high, 0.4, 1e-12);
  ASSERT_TRUE(rows[1].loss_gap.has_value());
  EXPECT_NEAR(rows[1].loss_gap->median, -0.1, 1e-12);
  EXPECT_FALSE(rows[0].loss_gap.has_value());
  EXPECT_FALSE(rows[4].loss_gap.has_value());
  EXPECT_FALSE(rows[5].loss_gap.has_value());
}

TEST(SeedRunsTest, TimeSpreadCountsTheSeedsThatReached) {
  ReportRow row = SeededRow("ring_topk", 2, {2.5, 3.4, 4.3});
  row.seed_runs[0].time_to_target_s = 1.5;
  row.seed_runs[2].time_to_target_s = 0.5;
  const auto [spread, reached] = SeedTimeSpread(row);
  EXPECT_EQ(reached, 2);
  ASSERT_TRUE(spread.has_value());
  EXPECT_DOUBLE_EQ(spread->median, 0.5);
  EXPECT_DOUBLE_EQ(spread->high, 1.5);
}

}  // namespace
}  // namespace ringside
