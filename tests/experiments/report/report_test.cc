#include "experiments/report/report.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

ReportRow Row(const std::string& strategy, int prm_srv,
              std::vector<double> utilization, double throughput) {
  ReportRow row = testing::NamedRow(strategy);
  row.prm_srv = prm_srv;
  row.utilization = std::move(utilization);
  row.throughput = throughput;
  return row;
}

std::vector<ReportRow> SmallCase() {
  return {Row("baseline", 0, {0.95}, 100), Row("sps", 1, {0.8, 0.7}, 150)};
}

// The fallback for a row whose registry entry is not at hand; compare
// names rows from the registry (registry_listing_test).
TEST(ReportTest, DisplayNameFallbackCapitalizes) {
  EXPECT_EQ(DisplayName("gossip"), "Gossip");
  EXPECT_EQ(DisplayName("sps"), "Sps");
  EXPECT_EQ(DisplayName(""), "");
}

TEST(ReportTest, MarkdownTableExactText) {
  EXPECT_EQ(MarkdownTable(SmallCase()),
            "| Parallel type | PrmSrv |  W0 |  W1 | Total "
            "| Throughput (samples/s) | Speedup | Scaling eff. |\n"
            "| :------------ | -----: | --: | --: | ----: "
            "| ---------------------: | ------: | -----------: |\n"
            "| Baseline      |      0 | 95% |   0 |  0.95 "
            "|                  100.0 |    1.00 |         1.00 |\n"
            "| SPS           |      1 | 80% | 70% |  1.50 "
            "|                  150.0 |    1.50 |         0.75 |\n");
}

TEST(ReportTest, TotalSpeedupAndEfficiency) {
  const ReportRow dps = Row("dps", 4, {0.9, 0.9, 0.9, 0.9}, 340);
  EXPECT_DOUBLE_EQ(TotalUtilization(dps), 3.6);
  const std::vector<ReportRow> rows = {Row("baseline", 0, {0.95}, 100), dps};
  const std::optional<double> base = BaselineThroughput(rows);
  ASSERT_TRUE(base.has_value());
  EXPECT_DOUBLE_EQ(*base, 100);
  EXPECT_DOUBLE_EQ(*Speedup(dps, base), 3.4);
  EXPECT_DOUBLE_EQ(*ScalingEfficiency(dps, base), 0.85);
  const std::string md = MarkdownTable(rows);
  EXPECT_THAT(md, HasSubstr("| DPS           |      4 | 90% | 90% | 90% | 90% "
                            "|  3.60 |                  340.0 |    3.40 "
                            "|         0.85 |"));
}

TEST(ReportTest, NoBaselineLeavesSpeedupEmpty) {
  const std::vector<ReportRow> rows = {Row("sps", 1, {0.5, 0.5}, 80)};
  EXPECT_FALSE(BaselineThroughput(rows).has_value());
  EXPECT_THAT(MarkdownTable(rows),
              HasSubstr("|  1.00 | " + std::string(18, ' ') +
                        "80.0 |       - |            - |"));
  const json j = JsonReport(rows);
  EXPECT_TRUE(j["rows"][0]["speedup"].is_null());
  EXPECT_TRUE(j["rows"][0]["scaling_eff"].is_null());
}

TEST(ReportTest, EmulatedRowsAreLabelled) {
  std::vector<ReportRow> rows = SmallCase();
  rows[1].emulated = true;
  EXPECT_THAT(MarkdownTable(rows), HasSubstr("| SPS (emulated) |"));
  EXPECT_THAT(CsvTable(rows), HasSubstr("sps,SPS (emulated),1,"));
  EXPECT_TRUE(JsonReport(rows)["rows"][1]["emulated"].get<bool>());
}

TEST(ReportTest, CsvTable) {
  EXPECT_EQ(CsvTable(SmallCase()),
            "strategy,parallel_type,prm_srv,W0,W1,total,throughput,speedup,"
            "scaling_eff,eval_loss,emulated,time_to_target_s\n"
            "baseline,Baseline,0,0.9500,0,0.9500,100.000,1.0000,1.0000,,"
            "false,\n"
            "sps,SPS,1,0.8000,0.7000,1.5000,150.000,1.5000,0.7500,,false,"
            "\n");
}

// Val loss sits beside the utilization table when the runs report one, "-"
// for a run that does not; no column when none does.
TEST(ReportTest, ValLossColumnBesideTheTable) {
  std::vector<ReportRow> rows = SmallCase();
  EXPECT_THAT(MarkdownTable(rows), ::testing::Not(HasSubstr("Val loss")));
  rows[0].eval_loss = 2.31234;
  const std::string md = MarkdownTable(rows);
  EXPECT_THAT(md, HasSubstr("| Scaling eff. | Val loss |\n"));
  EXPECT_THAT(md, HasSubstr("|         1.00 |   2.3123 |\n"));
  EXPECT_THAT(md, HasSubstr("|         0.75 |        - |\n"));
  EXPECT_THAT(CsvTable(rows), HasSubstr(",1.0000,2.31234,false,\n"));
  const json j = JsonReport(rows);
  EXPECT_EQ(j["columns"].back(), "Val loss");
  EXPECT_DOUBLE_EQ(j["rows"][0]["eval_loss"].get<double>(), 2.31234);
  EXPECT_TRUE(j["rows"][1]["eval_loss"].is_null());
}

// Time to target sits after Val loss when some row has a loss curve, "-"
// for a row that never reached the target or has no curve.
TEST(ReportTest, TimeToTargetColumnAfterValLoss) {
  std::vector<ReportRow> rows = SmallCase();
  rows.push_back(Row("ring", 0, {0.6, 0.6}, 140));
  rows[0].eval_loss = 1.25;
  rows[0].curve = {{4, 160, 0.5, 1.5}, {9, 320, 1.25, 1.25}};
  rows[0].time_to_target_s = 1.25;
  rows[1].curve = {{4, 320, 0.5, 1.9}};  // never reached
  EXPECT_EQ(MarkdownTable(rows),
            "| Parallel type | PrmSrv |  W0 |  W1 | Total "
            "| Throughput (samples/s) | Speedup | Scaling eff. | Val loss "
            "| Time to target (s) |\n"
            "| :------------ | -----: | --: | --: | ----: "
            "| ---------------------: | ------: | -----------: | -------: "
            "| -----------------: |\n"
            "| Baseline      |      0 | 95% |   0 |  0.95 "
            "|                  100.0 |    1.00 |         1.00 |   1.2500 "
            "|               1.25 |\n"
            "| SPS           |      1 | 80% | 70% |  1.50 "
            "|                  150.0 |    1.50 |         0.75 |        - "
            "|                  - |\n"
            "| Ring          |      0 | 60% | 60% |  1.20 "
            "|                  140.0 |    1.40 |         0.70 |        - "
            "|                  - |\n");
  // The column follows the curves, not the times: none without a curve.
  std::vector<ReportRow> no_curves = SmallCase();
  no_curves[0].time_to_target_s = 1.0;
  EXPECT_THAT(MarkdownTable(no_curves),
              ::testing::Not(HasSubstr("Time to target")));
  EXPECT_THAT(CsvTable(rows), HasSubstr(",1.0000,1.25,false,1.2500\n"));
  EXPECT_THAT(CsvTable(rows), HasSubstr(",0.7500,,false,\n"));
  const json j = JsonReport(rows);
  EXPECT_EQ(j["columns"].back(), "Time to target (s)");
  EXPECT_DOUBLE_EQ(j["rows"][0]["time_to_target_s"].get<double>(), 1.25);
  EXPECT_TRUE(j["rows"][1]["time_to_target_s"].is_null());
  EXPECT_EQ(j["rows"][0]["curve"],
            json::parse(R"([{"step":4,"samples":160,"train_wall_s":0.5,
                             "loss":1.5},
                            {"step":9,"samples":320,"train_wall_s":1.25,
                             "loss":1.25}])"));
  EXPECT_EQ(j["rows"][2]["curve"], json::array());
  EXPECT_TRUE(AnyCurve(rows));
  EXPECT_FALSE(AnyCurve(SmallCase()));
}

TEST(ReportTest, JsonReport) {
  const json j = JsonReport(SmallCase());
  EXPECT_EQ(j["columns"].size(), 8u);
  EXPECT_EQ(j["columns"][2], "W0");
  EXPECT_EQ(j["rows"][1]["parallel_type"], "SPS");
  EXPECT_EQ(j["rows"][1]["workers"], 2);
  EXPECT_DOUBLE_EQ(j["rows"][1]["total"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["rows"][1]["speedup"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["rows"][1]["scaling_eff"].get<double>(), 0.75);
}

TEST(ReportTest, RowFromFinalsTakesRankZerosThroughput) {
  const std::vector<json> finals = {{{"event", "final"},
                                     {"rank", 0},
                                     {"utilization", 0.6},
                                     {"throughput", 250.0},
                                     {"eval_loss", 0.25},
                                     {"measured_steps", 4},
                                     {"compute_s", 0.2},
                                     {"wall_s", 0.5},
                                     {"model_bytes", 4000},
                                     {"num_tensors", 6},
                                     {"bytes_sent", 12000},
                                     {"ring_bucket_bytes", 0},
                                     {"ring_first_bucket_bytes", 1024},
                                     {"warmup_steps", 2},
                                     {"start_step", 1},
                                     {"staleness", 3},
                                     {"device", "cuda"},
                                     {"model", "synthetic:gpt2"},
                                     {"emulated", false}},
                                    {{"event", "final"},
                                     {"rank", 1},
                                     {"utilization", 0.4},
                                     {"throughput", 1.0},
                                     {"eval_loss", 9.0},
                                     {"measured_steps", 4},
                                     {"compute_s", 0.24},
                                     {"emulated", true}}};
  const absl::StatusOr<ReportRow> row = RowFromFinals("ring", 0, finals);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->display_name, "Ring");
  EXPECT_EQ(row->prm_srv, 0);
  EXPECT_EQ(row->utilization, (std::vector<double>{0.6, 0.4}));
  EXPECT_DOUBLE_EQ(row->throughput, 250.0);
  // A rank ran emulated compute: the row has no validation loss.
  EXPECT_FALSE(row->eval_loss.has_value());
  // The slowest rank's compute: rank 1's 0.24 s over 4 steps.
  EXPECT_DOUBLE_EQ(row->compute_step_s, 0.06);
  EXPECT_EQ(row->compute_cpu_step_s, 0);  // no rank reported its CPU time
  EXPECT_DOUBLE_EQ(row->step_s, 0.125);
  EXPECT_EQ(row->model_bytes, 4000);
  EXPECT_EQ(row->num_tensors, 6);
  EXPECT_DOUBLE_EQ(row->bytes_sent_per_step, 3000);  // rank 0's, per step
  EXPECT_EQ(row->ring_bucket_bytes, 0);  // the caps it ran with
  EXPECT_EQ(row->ring_first_bucket_bytes, 1024);
  EXPECT_EQ(row->ps_chunk_bytes, -1);  // not reported: ring has none
  EXPECT_EQ(row->warmup_steps, 2);
  EXPECT_EQ(row->start_step, 1);
  EXPECT_EQ(row->measured_steps, 4);
  EXPECT_EQ(row->staleness, 3);
  EXPECT_TRUE(row->emulated);
  EXPECT_EQ(row->device, "cuda");
  EXPECT_EQ(row->model, "synthetic:gpt2");
  EXPECT_EQ(row->workers(), 2);
  EXPECT_EQ(ParallelTypeLabel(*row), "Ring (emulated)");
}

// A row's precision comes from rank 0's final record ("fp32" when the
// record has none, as an older one); the label names it when not fp32,
// and the JSON report carries it.
TEST(ReportTest, PrecisionComesFromTheRecordAndNamesTheRow) {
  const std::vector<nlohmann::json> bf16 = {{{"event", "final"},
                                             {"rank", 0},
                                             {"utilization", 0.5},
                                             {"throughput", 100.0},
                                             {"precision", "bf16"}}};
  absl::StatusOr<ReportRow> row = RowFromFinals("baseline", 0, bf16);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->precision, "bf16");
  EXPECT_EQ(ParallelTypeLabel(*row), "Baseline (bf16)");
  EXPECT_EQ(JsonReport({*row})["rows"][0]["precision"], "bf16");
  const std::vector<nlohmann::json> older = {{{"event", "final"},
                                              {"rank", 0},
                                              {"utilization", 0.5},
                                              {"throughput", 100.0}}};
  row = RowFromFinals("baseline", 0, older);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->precision, "fp32");
  EXPECT_EQ(ParallelTypeLabel(*row), "Baseline");
}

// The time the emulated compute was meant to take is the largest rank's
// record; rows whose measured compute is more than 5% off it are listed,
// rows within it, real compute and rows without the field are not.
TEST(ReportTest, EmulatedComputeThatDidNotHoldItsTimeIsListed) {
  const std::vector<json> finals = {
      {{"event", "final"}, {"rank", 0}, {"utilization", 0.5},
       {"throughput", 10.0}, {"measured_steps", 4}, {"compute_s", 0.88},
       {"wall_s", 1.0}, {"emulated", true}, {"emulated_compute_s", 0.2}},
      {{"event", "final"}, {"rank", 1}, {"utilization", 0.5},
       {"throughput", 10.0}, {"measured_steps", 4}, {"compute_s", 0.8},
       {"emulated", true}, {"emulated_compute_s", 0.2}}};
  absl::StatusOr<ReportRow> slow = RowFromFinals("ring", 0, finals);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_DOUBLE_EQ(slow->emulated_compute_s, 0.2);
  ReportRow held = *slow;
  held.strategy = "sps";
  held.display_name = "SPS";
  held.compute_step_s = 0.208;  // +4%
  ReportRow real = *slow;
  real.emulated = false;
  ReportRow unrecorded = *slow;
  unrecorded.emulated_compute_s = 0;
  const std::vector<std::string> misses =
      EmulatedComputeMisses({*slow, held, real, unrecorded});
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses[0],
            "Ring (emulated) n=2 (220.0 ms a step against 200.0 ms emulated, "
            "+10%)");
}

// Memory: the largest worker (params + grads + optimizer state) and peak
// RSS over ranks; the largest server's state and peak RSS over servers.
// The compute's CPU time per step is the slowest rank's (the one whose
// compute sets the pace), and none when any rank lacks it.
TEST(ReportTest, ComputeCpuTimeIsTheSlowestRanks) {
  std::vector<json> finals = {{{"event", "final"},
                               {"rank", 0},
                               {"utilization", 0.5},
                               {"throughput", 100.0},
                               {"measured_steps", 4},
                               {"compute_s", 0.2},
                               {"compute_cpu_s", 0.16},
                               {"wall_s", 0.5}},
                              {{"event", "final"},
                               {"rank", 1},
                               {"utilization", 0.5},
                               {"throughput", 100.0},
                               {"measured_steps", 4},
                               {"compute_s", 0.24},
                               {"compute_cpu_s", 0.12}}};
  absl::StatusOr<ReportRow> row = RowFromFinals("async_ps", 4, finals);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_DOUBLE_EQ(row->compute_step_s, 0.06);
  EXPECT_DOUBLE_EQ(row->compute_cpu_step_s, 0.03);  // rank 1's
  finals[0].erase("compute_cpu_s");
  row = RowFromFinals("async_ps", 4, finals);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->compute_cpu_step_s, 0);
}

TEST(ReportTest, StrategyOptionsComeFromRankZerosRecord) {
  const std::vector<json> finals = {
      {{"event", "final"},
       {"rank", 0},
       {"utilization", 0.5},
       {"throughput", 100.0},
       {"measured_steps", 4},
       {"strategy_options",
        {{"staleness", "2"}, {"chunk_kb", "512"}, {"bad", 3}}}}};
  absl::StatusOr<ReportRow> row = RowFromFinals("async_ps", 4, finals);
  ASSERT_TRUE(row.ok()) << row.status();
  const std::map<std::string, std::string> want = {{"chunk_kb", "512"},
                                                   {"staleness", "2"}};
  EXPECT_EQ(row->strategy_options, want);  // a non-text value is skipped
}

TEST(ReportTest, TensorShapesComeFromRankZerosRecord) {
  json final_record = {{"event", "final"},
                       {"rank", 0},
                       {"utilization", 0.5},
                       {"throughput", 100.0},
                       {"measured_steps", 4},
                       {"tensor_shapes", {{64, 1024}, {1024}, json::array()}}};
  absl::StatusOr<ReportRow> row = RowFromFinals("ring", 2, {final_record});
  ASSERT_TRUE(row.ok()) << row.status();
  const std::vector<std::vector<int64_t>> want = {{64, 1024}, {1024}, {}};
  EXPECT_EQ(row->tensor_shapes, want);
  // A malformed shape (a zero dimension) leaves none rather than a part.
  final_record["tensor_shapes"] = {{64, 1024}, {0}};
  row = RowFromFinals("ring", 2, {final_record});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_TRUE(row->tensor_shapes.empty());
}

TEST(ReportTest, MemoryIsTheLargestRankAndServer) {
  const std::vector<json> finals = {{{"utilization", 0.5},
                                     {"throughput", 10.0},
                                     {"param_bytes", 100},
                                     {"grad_bytes", 100},
                                     {"optimizer_state_bytes", 50},
                                     {"peak_rss_bytes", 900}},
                                    {{"utilization", 0.5},
                                     {"param_bytes", 100},
                                     {"grad_bytes", 100},
                                     {"optimizer_state_bytes", 70},
                                     {"peak_rss_bytes", 800}}};
  absl::StatusOr<ReportRow> row = RowFromFinals("zero1", 0, finals);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->worker_held_bytes, 270);
  EXPECT_EQ(row->worker_optimizer_bytes, 70);
  EXPECT_EQ(row->worker_peak_rss_bytes, 900);
  EXPECT_EQ(row->server_state_bytes, 0);
  AddServerFinals({{{"state_bytes", 40}, {"peak_rss_bytes", 300}},
                   json::object(),
                   {{"state_bytes", 60}, {"peak_rss_bytes", 200}}},
                  &*row);
  EXPECT_EQ(row->server_state_bytes, 60);
  EXPECT_EQ(row->server_peak_rss_bytes, 300);
}

TEST(ReportTest, MarkdownGridPadsAndAligns) {
  EXPECT_EQ(MarkdownGrid({{"a", "bb"}, {"long name", "1"}}),
            "| a         |  bb |\n"
            "| :-------- | --: |\n"
            "| long name |   1 |\n");
  EXPECT_EQ(MarkdownGrid({}), "");
}

TEST(ReportTest, CsvFieldQuotes) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(ReportTest, RowFromFinalsRejectsIncompleteRecords) {
  EXPECT_FALSE(RowFromFinals("sps", 1, {}).ok());
  const std::vector<json> no_util = {{{"throughput", 1.0}}};
  const absl::StatusOr<ReportRow> row = RowFromFinals("sps", 1, no_util);
  EXPECT_EQ(row.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(row.status().message()), HasSubstr("rank 0"));
  const std::vector<json> no_thr = {{{"utilization", 0.5}}};
  EXPECT_FALSE(RowFromFinals("sps", 1, no_thr).ok());
}

}  // namespace
}  // namespace ringside
