#include "experiments/report/sweep_report.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

ReportRow Row(const std::string& strategy, int prm_srv,
              std::vector<double> utilization, double throughput,
              bool emulated = false) {
  ReportRow row = testing::NamedRow(strategy);
  row.prm_srv = prm_srv;
  row.utilization = std::move(utilization);
  row.throughput = throughput;
  row.emulated = emulated;
  return row;
}

// Baseline at 100 samples/s; sps and ring at n = 1, 2, 4 (ring n=4 failed).
std::vector<ReportRow> Sweep(bool emulated = false) {
  return {Row("baseline", 0, {0.9}, 100, emulated),
          Row("sps", 1, {0.8}, 90, emulated),
          Row("ring", 0, {0.85}, 95, emulated),
          Row("sps", 1, {0.5, 0.4}, 150, emulated),
          Row("ring", 0, {0.7, 0.6}, 180, emulated),
          Row("sps", 1, {0.25, 0.25, 0.2, 0.2}, 200, emulated)};
}

TEST(SweepReportTest, WorkersAndStrategiesOfTheRows) {
  EXPECT_EQ(SweepWorkers(Sweep()), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(SweepStrategies(Sweep()),
            (std::vector<std::string>{"sps", "ring"}));
}

TEST(SweepReportTest, UtilizationRowsAreTheBaselineAndTheRunsAtN) {
  const std::vector<ReportRow> n2 = UtilizationRows(Sweep(), 2);
  ASSERT_EQ(n2.size(), 3u);
  EXPECT_EQ(n2[0].strategy, "baseline");
  EXPECT_EQ(n2[1].strategy, "sps");
  EXPECT_EQ(n2[2].strategy, "ring");
  EXPECT_EQ(n2[2].workers(), 2);
  EXPECT_EQ(UtilizationRows(Sweep(), 4).size(), 2u);  // ring n=4 missing
  // The study table for n = 4: W0..W3, the baseline's missing workers 0.
  EXPECT_EQ(MarkdownTable(UtilizationRows(Sweep(), 4)),
            "| Parallel type | PrmSrv |  W0 |  W1 |  W2 |  W3 | Total "
            "| Throughput (samples/s) | Speedup | Scaling eff. |\n"
            "| :------------ | -----: | --: | --: | --: | --: | ----: "
            "| ---------------------: | ------: | -----------: |\n"
            "| Baseline      |      0 | 90% |   0 |   0 |   0 |  0.90 "
            "|                  100.0 |    1.00 |         1.00 |\n"
            "| SPS           |      1 | 25% | 25% | 20% | 20% |  0.90 "
            "|                  200.0 |    2.00 |         0.50 |\n");
}

TEST(SweepReportTest, ScalingTablesAcrossN) {
  const std::vector<int> workers = {1, 2, 4};
  EXPECT_EQ(ScalingMarkdown(Sweep(), workers, ScalingMetric::kThroughput),
            "| Parallel type | PrmSrv |   n=1 |   n=2 |   n=4 |\n"
            "| :------------ | -----: | ----: | ----: | ----: |\n"
            "| Baseline      |      0 | 100.0 |     - |     - |\n"
            "| SPS           |      1 |  90.0 | 150.0 | 200.0 |\n"
            "| Ring          |      0 |  95.0 | 180.0 |     - |\n");
  EXPECT_EQ(ScalingMarkdown(Sweep(), workers, ScalingMetric::kSpeedup),
            "| Parallel type  | PrmSrv |  n=1 |  n=2 |  n=4 |\n"
            "| :------------- | -----: | ---: | ---: | ---: |\n"
            "| Baseline       |      0 | 1.00 |    - |    - |\n"
            "| SPS            |      1 | 0.90 | 1.50 | 2.00 |\n"
            "| Ring           |      0 | 0.95 | 1.80 |    - |\n"
            "| Linear (ideal) |      - | 1.00 | 2.00 | 4.00 |\n");
  EXPECT_THAT(ScalingMarkdown(Sweep(), workers, ScalingMetric::kEfficiency),
              HasSubstr("| SPS           |      1 | 0.90 | 0.75 | 0.50 |"));
}

TEST(SweepReportTest, BaselineColumnEvenWhenTheSweepSkipsOne) {
  const std::string md =
      ScalingMarkdown(Sweep(), {2, 4}, ScalingMetric::kThroughput);
  EXPECT_THAT(md, HasSubstr("|   n=1 |   n=2 |   n=4 |"));
}

TEST(SweepReportTest, CsvHasOneLinePerRunWithWorkers) {
  const std::string csv = SweepCsv(Sweep(), "2 cores (nproc), Test CPU");
  EXPECT_THAT(csv,
              HasSubstr("strategy,parallel_type,workers,prm_srv,W0,W1,W2,W3,"
                        "total,throughput,speedup,scaling_eff,eval_loss,"
                        "emulated,device,hardware,worker_held_mb,"
                        "worker_optimizer_mb,worker_peak_rss_mb,"
                        "server_state_mb,server_peak_rss_mb,formula_worker_mb,"
                        "formula_server_mb,time_to_target_s,runs,throughput_min,"
                        "throughput_max,throughput_spread\n"));
  // No memory reported: the memory fields are empty.
  EXPECT_THAT(csv, HasSubstr("\nbaseline,Baseline,1,0,0.9000,,,,0.9000,"
                             "100.000,1.0000,1.0000,,false,cpu,"
                             "\"2 cores (nproc), Test CPU\",,,,,,,,,1,,,\n"));
  EXPECT_THAT(csv, HasSubstr("\nsps,SPS,4,1,0.2500,0.2500,0.2000,0.2000,"
                             "0.9000,200.000,2.0000,0.5000,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 6
}

TEST(SweepReportTest, JsonShape) {
  const json j = SweepJson(Sweep(), {1, 2, 4});
  EXPECT_EQ(j["workers"], json({1, 2, 4}));
  EXPECT_EQ(j["compute"], "real");
  ASSERT_EQ(j["utilization"].size(), 3u);
  EXPECT_EQ(j["utilization"][1]["workers"], 2);
  EXPECT_EQ(j["utilization"][1]["table"]["rows"].size(), 3u);
  EXPECT_EQ(j["utilization"][1]["table"]["columns"][3], "W1");
  ASSERT_EQ(j["scaling"].size(), 3u);
  EXPECT_EQ(j["scaling"][0]["strategy"], "baseline");
  const json& sps = j["scaling"][1];
  EXPECT_EQ(sps["strategy"], "sps");
  EXPECT_EQ(sps["prm_srv"], 1);
  ASSERT_EQ(sps["points"].size(), 3u);
  EXPECT_EQ(sps["points"][2]["workers"], 4);
  EXPECT_DOUBLE_EQ(sps["points"][2]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(sps["points"][2]["scaling_eff"].get<double>(), 0.5);
  EXPECT_EQ(j["scaling"][2]["points"].size(), 2u);  // ring n=4 failed
  EXPECT_EQ(j["rows"].size(), 6u);
}

TEST(SweepReportTest, EmulatedComputeIsLabelledEverywhere) {
  const std::vector<ReportRow> rows = Sweep(/*emulated=*/true);
  EXPECT_EQ(ComputeLabel(rows), "emulated");
  EXPECT_THAT(ComputeSentence(rows), HasSubstr("emulated"));
  EXPECT_THAT(MarkdownTable(UtilizationRows(rows, 2)),
              HasSubstr("| SPS (emulated)      |"));
  EXPECT_THAT(ScalingMarkdown(rows, {1, 2, 4}, ScalingMetric::kSpeedup),
              HasSubstr("| Ring (emulated)     |"));
  EXPECT_THAT(SweepCsv(rows, "hw"), HasSubstr(",true,cpu,hw,,,,,,,,,1,,,\n"));
  const json j = SweepJson(rows, {1, 2, 4});
  EXPECT_EQ(j["compute"], "emulated");
  EXPECT_TRUE(j["scaling"][1]["emulated"].get<bool>());
  EXPECT_THAT(SweepMarkdown(rows, {1, 2, 4}, {}),
              HasSubstr("- **Compute:** emulated"));
}

TEST(SweepReportTest, ComputeLabels) {
  EXPECT_EQ(ComputeLabel({}), "unknown");
  EXPECT_EQ(ComputeLabel(Sweep()), "real");
  std::vector<ReportRow> mixed = Sweep();
  mixed[3].emulated = true;
  EXPECT_EQ(ComputeLabel(mixed), "mixed");
  EXPECT_THAT(ComputeSentence(mixed), HasSubstr("emulated in sps n=2"));
}

TEST(SweepReportTest, Bf16RowsAreNamedInThePrecisionLine) {
  std::vector<ReportRow> rows = Sweep();
  rows[3].precision = "bf16";
  EXPECT_THAT(SweepMarkdown(rows, {1, 2, 4}, {}),
              HasSubstr("- **Precision:** bf16 (bfloat16 matrix-product "
                        "operands, float32 accumulation, weights, gradients "
                        "and optimizer state) in SPS (bf16) n=2; float32 in "
                        "the others.\n"));
}

TEST(SweepReportTest, MarkdownDocument) {
  SweepDocument doc;
  doc.title = "Results";
  doc.hardware = "2 cores (nproc), Test CPU";
  doc.run = "model mlp";
  doc.command = "compare --workers=1,2,4";
  doc.images = {{"results/speedup.png", "Speedup"}};
  doc.notes = {"Note: one.", "Note: two."};
  doc.cost_model = "Link: given.\n\n| a |\n";
  const std::string md = SweepMarkdown(Sweep(), {1, 2, 4}, doc);
  EXPECT_EQ(md.rfind("# Results\n\n- **Hardware:** 2 cores (nproc), Test CPU\n"
                     "- **Compute:** real:",
                     0),
            0u)
      << md;
  EXPECT_THAT(md, HasSubstr("- **Precision:** float32 in every row.\n"));
  EXPECT_THAT(md, HasSubstr("- **Run:** model mlp\n"));
  EXPECT_THAT(md, HasSubstr("- **Command:** `compare --workers=1,2,4`\n"));
  EXPECT_THAT(md, HasSubstr("\n## Utilization, n = 1 worker\n\n| Parallel"));
  EXPECT_THAT(md, HasSubstr("\n## Utilization, n = 4 workers\n\n"));
  EXPECT_THAT(md, HasSubstr("\n## Throughput (global samples/s)\n\n"));
  EXPECT_THAT(md, HasSubstr("\n## Speedup (throughput / baseline "));
  EXPECT_THAT(md, HasSubstr("\n## Scaling efficiency (speedup / n)\n\n"));
  EXPECT_THAT(md, HasSubstr("![Speedup](results/speedup.png)"));
  EXPECT_THAT(md, HasSubstr("## Notes\n\nNote: one.\n\nNote: two.\n"));
  EXPECT_THAT(md, HasSubstr("\n## Cost model vs measured\n\nLink: given."
                            "\n\n| a |\n\n## Plots\n"));
  EXPECT_THAT(SweepMarkdown(Sweep(), {1, 2, 4}, {}), Not(HasSubstr("Plots")));
  EXPECT_THAT(SweepMarkdown(Sweep(), {1, 2, 4}, {}),
              Not(HasSubstr("Cost model")));
  EXPECT_THAT(md, Not(HasSubstr("Memory per rank")));  // none reported
}

// The sweep's loss curves: the target said before the tables, each run's
// time to it in its n's table (after Val loss), the CSV's last column and
// the JSON rows with their curves.
TEST(SweepReportTest, TimeToTargetInTablesCsvAndJson) {
  std::vector<ReportRow> rows = Sweep();
  rows[0].curve = {{4, 160, 0.5, 1.5}, {9, 320, 1.0, 1.2}};    // baseline
  rows[3].curve = {{4, 320, 0.25, 1.3}, {9, 640, 0.75, 1.1}};  // sps n=2
  rows[0].time_to_target_s = 1.0;
  rows[3].time_to_target_s = 0.75;
  SweepDocument doc;
  doc.target_loss =
      "Target loss 1.2000 (reached by every run; --target_loss sets it)";
  const std::string md = SweepMarkdown(rows, {1, 2, 4}, doc);
  EXPECT_THAT(md, HasSubstr("\nTarget loss 1.2000 (reached by every run; "
                            "--target_loss sets it). Time to target: "
                            "training wall time (evaluations excluded) until "
                            "rank 0's first validation loss at or below it; "
                            "\"-\" where a run never got there or has no "
                            "loss curve.\n\n## Utilization, n = 1 worker"));
  // n = 2: the baseline and sps reached it, ring has no curve.
  EXPECT_THAT(md, HasSubstr("| Scaling eff. | Time to target (s) |\n"));
  EXPECT_THAT(md, HasSubstr("|         1.00 |               1.00 |\n"));
  EXPECT_THAT(md, HasSubstr("|         0.75 |               0.75 |\n"));
  EXPECT_THAT(md, HasSubstr("|         0.90 |                  - |\n"));
  EXPECT_THAT(SweepMarkdown(Sweep(), {1, 2, 4}, {}),
              Not(HasSubstr("Target loss")));
  const std::string csv = SweepCsv(rows, "hw");
  EXPECT_THAT(csv, HasSubstr("\nbaseline,Baseline,1,0,0.9000,,,,0.9000,"
                             "100.000,1.0000,1.0000,,false,cpu,hw,,,,,,,,"
                             "1.0000,1,,,\n"));
  EXPECT_THAT(csv, HasSubstr("\nsps,SPS,2,1,0.5000,0.4000,,,0.9000,150.000,"
                             "1.5000,0.7500,,false,cpu,hw,,,,,,,,0.7500,1,,,\n"));
  EXPECT_THAT(csv, HasSubstr("\nring,Ring,2,0,0.7000,0.6000,,,1.3000,"
                             "180.000,1.8000,0.9000,,false,cpu,hw,,,,,,,,,1,,,\n"));
  const json j = SweepJson(rows, {1, 2, 4});
  EXPECT_EQ(j["rows"][3]["curve"].size(), 2u);
  EXPECT_EQ(j["rows"][3]["curve"][1]["samples"], 640);
  EXPECT_DOUBLE_EQ(j["rows"][3]["time_to_target_s"].get<double>(), 0.75);
  EXPECT_TRUE(j["rows"][4]["time_to_target_s"].is_null());
  EXPECT_EQ(j["utilization"][1]["table"]["columns"].back(),
            "Time to target (s)");
}

TEST(SweepReportTest, MemoryPerRankInMarkdownAndCsv) {
  std::vector<ReportRow> rows = Sweep();
  rows[3].worker_held_bytes = 12'500'000;  // sps n=2
  rows[3].worker_peak_rss_bytes = 40'000'000;
  rows[3].server_state_bytes = 9'000'000;
  rows[3].server_peak_rss_bytes = 30'000'000;
  rows[4].worker_held_bytes = 20'000'000;  // ring n=2
  rows[4].worker_optimizer_bytes = 5'000'000;
  // The formula needs P and s: P = 5 MB, momentum (s = 1) on both rows.
  for (int i : {3, 4}) {
    rows[i].model_bytes = 5'000'000;
    rows[i].optimizer_state_per_param = 1;
  }
  const std::string md = SweepMarkdown(rows, {1, 2, 4}, {});
  EXPECT_THAT(md, HasSubstr("\n## Memory per rank (MB)\n\n| Parallel type"));
  const std::string memory = MemoryMarkdown(rows);
  // sps: worker 2P = 10.0, server (2 + s)P = 15.0; ring: (2 + s)P = 15.0.
  EXPECT_THAT(memory, HasSubstr("| SPS           |   2 |      1 |       12.5 "
                                "|    10.0 |               - |            "
                                "40.0 |        9.0 |    15.0 |            "
                                "30.0 | 2P; server (2 + s)·P |"));
  EXPECT_THAT(memory, HasSubstr("| Ring          |   2 |      0 |       20.0 "
                                "|    15.0 |             5.0 |             "
                                "  - |          - |       - |             "
                                "  - |            (2 + s)·P |"));
  EXPECT_THAT(memory, HasSubstr("the whole gradient buffer when backward "
                                "outruns the reductions"));
  EXPECT_THAT(SweepCsv(rows, "hw"),
              HasSubstr(",hw,12.500,,40.000,9.000,30.000,10.000,15.000,,1,,,\n"));
  EXPECT_THAT(SweepCsv(rows, "hw"),
              HasSubstr(",hw,20.000,5.000,,,,15.000,,,1,,,\n"));
  EXPECT_EQ(MemoryMarkdown(Sweep()), "");
  const json j = SweepJson(rows, {1, 2, 4});
  ASSERT_EQ(j["memory"].size(), 2u);  // the rows that report memory
  EXPECT_EQ(j["memory"][0]["strategy"], "sps");
  EXPECT_EQ(j["memory"][0]["workers"], 2);
  EXPECT_EQ(j["memory"][0]["worker_held_bytes"], 12'500'000);
  EXPECT_TRUE(j["memory"][0]["worker_optimizer_bytes"].is_null());
  EXPECT_EQ(j["memory"][0]["server_peak_rss_bytes"], 30'000'000);
  EXPECT_EQ(j["memory"][0]["formula"], "2P; server (2 + s)·P");
  EXPECT_DOUBLE_EQ(j["memory"][0]["formula_worker_bytes"].get<double>(), 1e7);
  EXPECT_DOUBLE_EQ(j["memory"][0]["formula_server_bytes"].get<double>(),
                   1.5e7);
  EXPECT_EQ(j["memory"][1]["worker_optimizer_bytes"], 5'000'000);
  EXPECT_TRUE(j["memory"][1]["formula_server_bytes"].is_null());  // no server
  EXPECT_TRUE(SweepJson(Sweep(), {1, 2, 4})["memory"].empty());

  // Without s (an older record) or a formula, the formula columns are empty.
  rows[4].optimizer_state_per_param = -1;
  EXPECT_FALSE(FormulaMemory(rows[4]).has_value());
  EXPECT_THAT(MemoryMarkdown(rows),
              HasSubstr("| Ring          |   2 |      0 |       20.0 |       "
                        "- |"));
  rows[3].modelled_as = "";
  EXPECT_FALSE(FormulaMemory(rows[3]).has_value());
}

TEST(SweepReportTest, TrafficPerWorkerAgainstAnAllReduceOfTheModel) {
  std::vector<ReportRow> rows = Sweep();
  EXPECT_EQ(TrafficMarkdown(rows), "") << "no row reports its bytes";
  // n = 2: a ring all-reduce of a 4 MB model sends 2·1/2·4 = 4 MB a rank.
  for (int i : {0, 3, 4}) rows[i].model_bytes = 4'000'000;
  rows[0].bytes_sent_per_step = 0;          // the baseline (n = 1): no row
  rows[3].bytes_sent_per_step = 4'000'000;  // sps n=2: M
  rows[4].bytes_sent_per_step = 125'000;    // ring n=2, as if compressed
  rows[4].updates = "lossy (a test)";
  const std::string traffic = TrafficMarkdown(rows);
  EXPECT_THAT(traffic, HasSubstr("| SPS           |   2 |      1 |          "
                                 "    4.000 |                 1.000 (1/1.0) "
                                 "|          exact |"));
  EXPECT_THAT(traffic, HasSubstr("| Ring          |   2 |      0 |          "
                                 "    0.125 |                0.031 (1/32.0) "
                                 "| lossy (a test) |"));
  EXPECT_THAT(traffic, Not(HasSubstr("Baseline")));
  EXPECT_THAT(SweepMarkdown(rows, {1, 2, 4}, {}),
              HasSubstr("\n## Traffic per worker\n\n| Parallel type"));
  const json j = JsonReport(rows);
  EXPECT_DOUBLE_EQ(j["rows"][4]["bytes_sent_per_step"].get<double>(), 125e3);
  EXPECT_DOUBLE_EQ(j["rows"][4]["vs_allreduce_bytes"].get<double>(), 0.03125);
  EXPECT_TRUE(j["rows"][5]["bytes_sent_per_step"].is_null());
  EXPECT_TRUE(j["rows"][0]["vs_allreduce_bytes"].is_null()) << "n = 1";
}

TEST(SweepReportTest, SeedsTableAndJsonGiveEachRowsRangeAndGap) {
  std::vector<ReportRow> rows = Sweep();
  EXPECT_EQ(SeedMarkdown(rows), "") << "no row has seeds";
  EXPECT_THAT(SweepMarkdown(rows, {1, 2, 4}, {}),
              Not(HasSubstr("Final loss over seeds")));
  ReportRow& ring = rows[4];
  ring.updates = "lossy (a test)";
  ring.seed_runs = {{1, 2.5, {}, 1.25}, {2, 2.75, {}, std::nullopt},
                    {3, 2.625, {}, 0.75}};
  ring.loss_gap = ValueSpread{0.125, 0.0625, 0.25};
  const std::string seeds = SeedMarkdown(rows);
  EXPECT_THAT(seeds, HasSubstr("| Ring          |   2 | lossy (a test) |     "
                               "3 | 2.6250 (2.5000 to 2.7500) | +0.1250 "
                               "(+0.0625 to +0.2500) |                0.75 "
                               "(0.75 to 1.25) |  2 of 3 |"));
  EXPECT_THAT(seeds, Not(HasSubstr("SPS")));
  EXPECT_THAT(SweepMarkdown(rows, {1, 2, 4}, {}),
              HasSubstr("\n## Final loss over seeds\n\n| Parallel type"));
  const json j = JsonReport(rows);
  ASSERT_EQ(j["rows"][4]["seeds"].size(), 3u);
  EXPECT_EQ(j["rows"][4]["seeds"][2]["seed"], 3);
  EXPECT_DOUBLE_EQ(j["rows"][4]["seeds"][1]["eval_loss"].get<double>(), 2.75);
  EXPECT_TRUE(j["rows"][4]["seeds"][1]["time_to_target_s"].is_null());
  EXPECT_DOUBLE_EQ(j["rows"][4]["loss_gap"]["median"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(j["rows"][4]["loss_gap"]["high"].get<double>(), 0.25);
  EXPECT_TRUE(j["rows"][3]["seeds"].empty());
  EXPECT_TRUE(j["rows"][3]["loss_gap"].is_null());
}

TEST(SweepReportTest, FormulaMemoryFollowsTheRowsFormulaNAndK) {
  ReportRow zero1 = testing::NamedRow("zero1");
  zero1.utilization = {0.5, 0.5, 0.5, 0.5};  // n = 4
  zero1.model_bytes = 8'000'000;             // P
  zero1.optimizer_state_per_param = 2;       // Adam
  std::optional<MemoryPerRank> m = FormulaMemory(zero1);
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->worker_bytes, 2 * 8e6 + 2 * 8e6 / 4);  // 2P + sP/n
  EXPECT_DOUBLE_EQ(m->server_bytes, 0);
  ReportRow dps = testing::NamedRow("dps");
  dps.utilization = {0.5, 0.5};
  dps.prm_srv = 4;  // K
  dps.model_bytes = 8'000'000;
  dps.optimizer_state_per_param = 2;
  m = FormulaMemory(dps);
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->worker_bytes, 2 * 8e6);
  EXPECT_DOUBLE_EQ(m->server_bytes, 4 * 8e6 / 4);  // (2 + s)P/K
  EXPECT_FALSE(FormulaMemory(testing::NamedRow("my_strategy")).has_value());
}

}  // namespace
}  // namespace ringside
