// CrossoverTable, its renderers and the bandwidth plots on a hand-made
// sweep. Every row runs 32 samples per worker per step (step_s = n·32 /
// throughput), so a predicted step time t gives n·32/t samples/s, from the
// row (measured points) or from the derived batch (the unmeasured one):
//
//   point              n  measured (samples/s)        predicted step (s)
//   unshaped loopback  2  Ring 1000, SPS 500           -
//   0.1 Gbit/s         2  SPS 80, DPS 120, Ring 60     -
//                      4  SPS 150, DPS 100, Ring 50    DPS 0.8 (160),
//                                                      SPS 0.81 (158.02)
//   1 Gbit/s           2  SPS 100, DPS 150, Ring 200   SPS 0.8 (80),
//                                                      DPS 0.4 (160),
//                                                      Ring 0.25 (256)
//                      4  SPS 180, DPS 300, Ring 295   SPS 0.4 (320),
//                                                      DPS 0.5 (256),
//                                                      Ring: none
//   10 Gbit/s (not     2  -                            Ring 0.1 (640),
//   measured)                                          DPS 0.2 (320)
#include "experiments/report/link_sweep.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kBatch = 32;

ReportRow Row(const std::string& strategy, int n, double throughput) {
  ReportRow row = testing::NamedRow(strategy);
  row.prm_srv = strategy == "sps" ? 1 : strategy == "dps" ? n : 0;
  row.utilization.assign(n, 0.5);
  row.throughput = throughput;
  row.step_s = n * kBatch / throughput;
  return row;
}

// The prediction of `row` with a predicted step of `step_s`.
PredictedRun Predict(const ReportRow& row, double step_s) {
  PredictedRun run;
  run.strategy = row.strategy;
  run.parallel_type = ParallelTypeLabel(row);
  run.workers = row.workers();
  run.prm_srv = row.prm_srv;
  run.measured_step_s = row.step_s;
  Prediction p;
  p.step_s = step_s;
  run.prediction = p;
  return run;
}

// A run the cost model could not predict.
PredictedRun Unpredicted(const ReportRow& row) {
  PredictedRun run = Predict(row, 0);
  run.prediction.reset();
  run.why_not = "not in the cost model";
  return run;
}

LinkSweepPoint Point(double gbit, double latency_us,
                     std::vector<ReportRow> rows) {
  LinkSweepPoint p;
  p.link = {gbit, latency_us};
  p.dir = LinkDirName(p.link);
  p.rows = std::move(rows);
  return p;
}

std::vector<LinkSweepPoint> Sweep() {
  LinkSweepPoint loopback =
      Point(0, 0, {Row("ring", 2, 1000), Row("sps", 2, 500)});
  LinkSweepPoint slow =
      Point(0.1, 0,
            {Row("sps", 2, 80), Row("dps", 2, 120), Row("ring", 2, 60),
             Row("sps", 4, 150), Row("dps", 4, 100), Row("ring", 4, 50)});
  slow.predicted = {Predict(slow.rows[4], 0.8), Predict(slow.rows[3], 0.81)};
  LinkSweepPoint fast =
      Point(1, 0,
            {Row("sps", 2, 100), Row("dps", 2, 150), Row("ring", 2, 200),
             Row("sps", 4, 180), Row("dps", 4, 300), Row("ring", 4, 295)});
  fast.predicted = {Predict(fast.rows[0], 0.8),  Predict(fast.rows[1], 0.4),
                    Predict(fast.rows[2], 0.25), Predict(fast.rows[3], 0.4),
                    Predict(fast.rows[4], 0.5),  Unpredicted(fast.rows[5])};
  // Not shaped here: predicted from the 1 Gbit/s point's rows.
  LinkSweepPoint unmeasured = Point(10, 0, {});
  unmeasured.measured = false;
  unmeasured.predicted = {Predict(fast.rows[2], 0.1),
                          Predict(fast.rows[1], 0.2)};
  return {loopback, slow, fast, unmeasured};
}

TEST(LinkSweepTest, LinkLabelsAndFolderNames) {
  EXPECT_EQ(LinkLabel({0, 0}), "unshaped loopback");
  EXPECT_EQ(LinkLabel({0, 200}), "unshaped loopback");
  EXPECT_EQ(LinkLabel({0.1, 0}), "0.1 Gbit/s");
  EXPECT_EQ(LinkLabel({1, 200}), "1 Gbit/s, 200 µs");
  EXPECT_EQ(LinkDirName({0, 0}), "link_unshaped");
  EXPECT_EQ(LinkDirName({0.1, 0}), "link_0.1gbit");
  EXPECT_EQ(LinkDirName({1, 200}), "link_1gbit_200us");
  EXPECT_EQ(LinkDirName({2.5, 0.5}), "link_2.5gbit_0.5us");
  EXPECT_EQ(LinkDirName({1e-6, 0}), "link_1e-06gbit");
}

TEST(LinkSweepTest, PredictedThroughputFromTheRowOrTheBatch) {
  // Measured point: the row's samples per step (100 · 1 s) in the
  // predicted 0.5 s, whatever the batch; unmeasured: n · batch / step.
  ReportRow ring = Row("ring", 2, 100);
  ring.step_s = 1.0;
  LinkSweepPoint measured = Point(1, 0, {ring});
  measured.predicted = {Predict(ring, 0.5)};
  LinkSweepPoint unmeasured = Point(10, 0, {});
  unmeasured.measured = false;
  unmeasured.predicted = {Predict(ring, 0.5)};
  EXPECT_DOUBLE_EQ(ThroughputsAt(measured, 2, 10).predicted.at(0).throughput,
                   200);
  EXPECT_DOUBLE_EQ(ThroughputsAt(unmeasured, 2, 10).predicted.at(0).throughput,
                   40);
  // Derived: 100 samples/s · 1 s / 2 workers.
  EXPECT_DOUBLE_EQ(SweepBatchPerWorker({unmeasured, measured}, 0), 50);
  EXPECT_DOUBLE_EQ(SweepBatchPerWorker({measured}, 7), 7);
  EXPECT_EQ(SweepBatchPerWorker({unmeasured}, 0), 0);
  EXPECT_TRUE(ThroughputsAt(unmeasured, 2, 0).predicted.empty());
  EXPECT_TRUE(ThroughputsAt(measured, 4, 10).measured.empty());
}

TEST(LinkSweepTest, CrossoverPerPointAndN) {
  const Crossover c = CrossoverTable(Sweep(), {2, 4, 8});
  EXPECT_DOUBLE_EQ(c.batch_per_worker, kBatch);
  // The loopback has nothing at n = 4, the unmeasured point nothing at
  // n = 4, no point anything at n = 8.
  ASSERT_EQ(c.rows.size(), 6u);

  const CrossoverRow& loop = c.rows[0];
  EXPECT_EQ(loop.link.gbit, 0);
  EXPECT_EQ(loop.workers, 2);
  EXPECT_EQ(loop.fastest, "Ring");
  EXPECT_DOUBLE_EQ(loop.fastest_throughput, 1000);
  EXPECT_EQ(loop.runner_up, "SPS");
  EXPECT_DOUBLE_EQ(*loop.margin, 2);
  EXPECT_EQ(loop.agree, "-");

  const CrossoverRow& slow2 = c.rows[1];
  EXPECT_EQ(slow2.link.gbit, 0.1);
  EXPECT_EQ(slow2.dir, "link_0.1gbit");
  EXPECT_EQ(slow2.fastest, "DPS");
  EXPECT_EQ(slow2.runner_up, "SPS");
  EXPECT_DOUBLE_EQ(*slow2.margin, 1.5);
  EXPECT_FALSE(slow2.tie);
  EXPECT_EQ(slow2.predicted_fastest, "");
  EXPECT_EQ(slow2.agree, "-");

  // Predicted DPS 160 ties with SPS 158.02 (1.25%), and the measured
  // fastest is SPS: they agree.
  const CrossoverRow& slow4 = c.rows[2];
  EXPECT_EQ(slow4.workers, 4);
  EXPECT_EQ(slow4.fastest, "SPS");
  EXPECT_DOUBLE_EQ(slow4.fastest_throughput, 150);
  EXPECT_EQ(slow4.predicted_fastest, "DPS");
  EXPECT_NEAR(slow4.predicted_throughput, 160, 1e-9);
  EXPECT_EQ(slow4.predicted_runner_up, "SPS");
  EXPECT_NEAR(slow4.predicted_runner_up_throughput, 128 / 0.81, 1e-9);
  EXPECT_TRUE(slow4.predicted_tie);
  EXPECT_EQ(slow4.agree, "yes");

  const CrossoverRow& fast2 = c.rows[3];
  EXPECT_EQ(fast2.link.gbit, 1);
  EXPECT_EQ(fast2.fastest, "Ring");
  EXPECT_DOUBLE_EQ(fast2.fastest_throughput, 200);
  EXPECT_EQ(fast2.runner_up, "DPS");
  EXPECT_DOUBLE_EQ(*fast2.margin, 200.0 / 150);
  EXPECT_EQ(fast2.predicted_fastest, "Ring");
  EXPECT_NEAR(fast2.predicted_throughput, 256, 1e-9);
  EXPECT_EQ(fast2.agree, "yes");

  // DPS 300 and Ring 295 tie (1.7%); the model predicts SPS (320), which
  // neither ties with.
  const CrossoverRow& fast4 = c.rows[4];
  EXPECT_EQ(fast4.fastest, "DPS");
  EXPECT_EQ(fast4.runner_up, "Ring");
  EXPECT_TRUE(fast4.tie);
  EXPECT_EQ(fast4.predicted_fastest, "SPS");
  EXPECT_NEAR(fast4.predicted_throughput, 320, 1e-9);
  EXPECT_FALSE(fast4.predicted_tie);
  EXPECT_EQ(fast4.agree, "no");

  const CrossoverRow& far = c.rows[5];
  EXPECT_FALSE(far.measured);
  EXPECT_EQ(far.link.gbit, 10);
  EXPECT_EQ(far.fastest, "");
  EXPECT_FALSE(far.margin.has_value());
  EXPECT_EQ(far.predicted_fastest, "Ring");
  EXPECT_NEAR(far.predicted_throughput, 640, 1e-9);
  EXPECT_EQ(far.predicted_runner_up, "DPS");
  EXPECT_EQ(far.agree, "-");

  // The caller's batch overrides the derived one (unmeasured only).
  const Crossover given = CrossoverTable(Sweep(), {2}, 64);
  EXPECT_NEAR(given.rows.back().predicted_throughput, 1280, 1e-9);
  EXPECT_NEAR(given.rows[2].predicted_throughput, 256, 1e-9);
}

TEST(LinkSweepTest, TieBoundaryIsTwoPercent) {
  LinkSweepPoint p = Point(1, 0, {Row("sps", 2, 102), Row("dps", 2, 100)});
  EXPECT_TRUE(CrossoverTable({p}, {2}).rows.at(0).tie);
  p.rows[0].throughput = 102.5;
  EXPECT_FALSE(CrossoverTable({p}, {2}).rows.at(0).tie);
}

TEST(LinkSweepTest, EmulatedRowsAreTheirOwnStrategy) {
  ReportRow emulated = Row("ring", 2, 300);
  emulated.emulated = true;
  LinkSweepPoint p = Point(1, 0, {Row("ring", 2, 200), emulated});
  const CrossoverRow r = CrossoverTable({p}, {2}).rows.at(0);
  EXPECT_EQ(r.fastest, "Ring (emulated)");
  EXPECT_EQ(r.runner_up, "Ring");
}

TEST(LinkSweepTest, Markdown) {
  const std::string md = CrossoverMarkdown(CrossoverTable(Sweep(), {2, 4}));
  const std::string expected_table = MarkdownGrid(
      {{"Link", "n", "Fastest (measured)", "Throughput (samples/s)",
        "Runner-up", "Margin", "Fastest (predicted)", "Predicted (samples/s)",
        "Agree", "Faster, not exact (measured)"},
       {"unshaped loopback", "2", "Ring", "1000.0", "SPS", "2.00×", "-", "-",
        "-", "-"},
       {"0.1 Gbit/s", "2", "DPS", "120.0", "SPS", "1.50×", "-", "-", "-",
        "-"},
       {"0.1 Gbit/s", "4", "SPS", "150.0", "DPS", "1.50×", "DPS (tie)", "160.0",
        "yes", "-"},
       {"1 Gbit/s", "2", "Ring", "200.0", "DPS", "1.33×", "Ring", "256.0",
        "yes", "-"},
       {"1 Gbit/s", "4", "DPS (tie)", "300.0", "Ring", "1.02×", "SPS", "320.0",
        "no", "-"},
       {"10 Gbit/s (not measured)", "2", "-", "-", "-", "-", "Ring", "640.0",
        "-", "-"}});
  EXPECT_EQ(md.substr(0, expected_table.size()), expected_table);
  EXPECT_THAT(md, HasSubstr("No lossy or stale strategy was faster."));
  EXPECT_THAT(md.substr(expected_table.size()),
              HasSubstr("\"not measured\" could not be shaped here"));
  // Without an unmeasured point, no note.
  std::vector<LinkSweepPoint> measured = Sweep();
  measured.pop_back();
  const std::string md2 = CrossoverMarkdown(CrossoverTable(measured, {2, 4}));
  EXPECT_THAT(md2, Not(HasSubstr("not measured")));
}

TEST(LinkSweepTest, LossyAndStaleStrategiesAreNamedApartFromTheRanking) {
  // At 1 Gbit/s, n = 2: async_ps (τ = 2) at 400 and ring_fp16 at 300 beat
  // Ring's 200, the fastest exact one; the ranking keeps Ring first and
  // names async_ps, the faster of the two, apart.
  ReportRow async = Row("async_ps", 2, 400);
  async.modelled_as = "async_ps";
  async.staleness = 2;
  ReportRow fp16 = Row("ring_fp16", 2, 300);
  fp16.modelled_as = "ring_fp16";
  const LinkSweepPoint point =
      Point(1, 0, {Row("sps", 2, 100), Row("ring", 2, 200), async, fp16});
  const Crossover table = CrossoverTable({point}, {2});
  ASSERT_EQ(table.rows.size(), 1u);
  const CrossoverRow& r = table.rows[0];
  EXPECT_EQ(r.fastest, "Ring");
  EXPECT_EQ(r.runner_up, "SPS");
  EXPECT_EQ(r.faster_not_exact,
            absl::StrCat(ParallelTypeLabel(async), ", stale (τ=2)"));
  EXPECT_DOUBLE_EQ(r.faster_not_exact_throughput, 400);
  EXPECT_THAT(CrossoverMarkdown(table), HasSubstr("stale (τ=2): 400.0"));
  // Slower than the fastest exact one: not named.
  async.throughput = 150;
  fp16.throughput = 100;
  const Crossover slower = CrossoverTable(
      {Point(1, 0, {Row("ring", 2, 200), async, fp16})}, {2});
  EXPECT_EQ(slower.rows[0].faster_not_exact, "");
}

TEST(LinkSweepTest, CsvShape) {
  const std::string csv = CrossoverCsv(CrossoverTable(Sweep(), {2, 4}));
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n');
  ASSERT_EQ(lines.size(), 8u);  // header, 6 rows, "" after the last '\n'
  EXPECT_EQ(lines[0],
            "link_gbit,link_latency_us,link,measured,dir,workers,fastest,"
            "fastest_throughput,runner_up,runner_up_throughput,margin,tie,"
            "predicted_fastest,predicted_throughput,predicted_tie,agree,"
            "faster_not_exact,faster_not_exact_throughput");
  EXPECT_EQ(lines[1],
            "0,0,unshaped loopback,true,link_unshaped,2,Ring,1000.0000,SPS,"
            "500.0000,2.0000,false,,,false,-,,");
  EXPECT_EQ(lines[5],
            "1,0,1 Gbit/s,true,link_1gbit,4,DPS,300.0000,Ring,295.0000,"
            "1.0169,true,SPS,320.0000,false,no,,");
  EXPECT_EQ(lines[6],
            "10,0,10 Gbit/s,false,link_10gbit,2,,,,,,false,Ring,640.0000,"
            "false,-,,");
  EXPECT_EQ(lines[7], "");
  // A label with a comma is quoted.
  LinkSweepPoint p = Point(1, 200, {Row("ring", 2, 200)});
  EXPECT_THAT(CrossoverCsv(CrossoverTable({p}, {2})),
              HasSubstr("1,200,\"1 Gbit/s, 200 µs\",true,"));
}

TEST(LinkSweepTest, JsonShape) {
  const nlohmann::json j = CrossoverJson(CrossoverTable(Sweep(), {2, 4}));
  EXPECT_DOUBLE_EQ(j["tie_tolerance"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j["batch_per_worker"].get<double>(), 32);
  ASSERT_EQ(j["rows"].size(), 6u);
  const nlohmann::json& fast4 = j["rows"][4];
  EXPECT_EQ(fast4["link"]["gbit"], 1.0);
  EXPECT_EQ(fast4["link"]["latency_us"], 0.0);
  EXPECT_EQ(fast4["link"]["label"], "1 Gbit/s");
  EXPECT_EQ(fast4["link"]["dir_name"], "link_1gbit");
  EXPECT_EQ(fast4["measured"], true);
  EXPECT_EQ(fast4["workers"], 4);
  EXPECT_EQ(fast4["fastest"], "DPS");
  EXPECT_DOUBLE_EQ(fast4["fastest_throughput"].get<double>(), 300);
  EXPECT_EQ(fast4["runner_up"], "Ring");
  EXPECT_DOUBLE_EQ(fast4["margin"].get<double>(), 300.0 / 295);
  EXPECT_EQ(fast4["tie"], true);
  EXPECT_EQ(fast4["predicted_fastest"], "SPS");
  EXPECT_EQ(fast4["predicted_runner_up"], "DPS");
  EXPECT_EQ(fast4["agree"], "no");
  const nlohmann::json& far = j["rows"][5];
  EXPECT_EQ(far["measured"], false);
  EXPECT_TRUE(far["fastest"].is_null());
  EXPECT_TRUE(far["fastest_throughput"].is_null());
  EXPECT_TRUE(far["runner_up"].is_null());
  EXPECT_TRUE(far["margin"].is_null());
  EXPECT_EQ(far["predicted_fastest"], "Ring");
  EXPECT_EQ(far["agree"], "-");
  EXPECT_TRUE(j["rows"][1]["predicted_throughput"].is_null());
  // No batch: null.
  EXPECT_TRUE(
      CrossoverJson(CrossoverTable({}, {2}))["batch_per_worker"].is_null());
}

PlotOptions Options(const std::string& dir) {
  PlotOptions o;
  o.dir = dir;
  o.subtitle = "real compute; 2 cores (nproc)";
  return o;
}

// The part of `text` from `from` to the next "set output" (or the end).
std::string Section(const std::string& text, const std::string& from) {
  const size_t begin = text.find(from);
  if (begin == std::string::npos) return "";
  const size_t end = text.find("set output", begin + from.size());
  return text.substr(
      begin, end == std::string::npos ? std::string::npos : end - begin);
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size())) {
    ++count;
  }
  return count;
}

TEST(LinkSweepTest, PlotScriptOneBlockPerStrategyOnLogAxes) {
  const PlotScript s = BandwidthPlotScript(Sweep(), {2, 4, 8}, Options("/o"));
  ASSERT_EQ(s.images.size(), 2u);  // nothing at n = 8
  EXPECT_EQ(s.images[0].path, "throughput_vs_bandwidth_n2.png");
  EXPECT_EQ(s.images[1].path, "throughput_vs_bandwidth_n4.png");
  EXPECT_THAT(s.images[0].caption,
              HasSubstr("measured (solid) and the cost model's prediction "
                        "(dashed); dotted: unshaped loopback (real "
                        "compute)"));
  EXPECT_THAT(s.text, HasSubstr("set logscale x 10\nset logscale y\n"));
  EXPECT_EQ(Count(s.text, "set logscale x"), 2);
  // 240 px wider than asked, for the key on the right.
  EXPECT_THAT(s.text, HasSubstr("set terminal pngcairo size 1200,540 "
                                "noenhanced\n"));
  EXPECT_THAT(s.text, HasSubstr("set key outside right top vertical\n"));
  EXPECT_THAT(s.text, HasSubstr("set output \"/o/throughput_vs_bandwidth_"
                                "n2.png\"\nset title \"Throughput against "
                                "link bandwidth, n = 2 workers\\nreal "
                                "compute; 2 cores (nproc)\"\n"));

  // n = 2: SPS, DPS, Ring in first-seen order; gbit 0.1, 1, 10 (the
  // unshaped loopback is no point of a line).
  EXPECT_EQ(Count(s.text, "$bw_n2_"), 3 + 6);  // blocks + plot clauses
  EXPECT_EQ(Count(s.text, " << EOD\n"), 6);    // 3 per n
  EXPECT_THAT(s.text, HasSubstr("$bw_n2_0 << EOD\n0.1 80 NaN\n1 100 80\n"
                                "10 NaN NaN\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("$bw_n2_1 << EOD\n0.1 120 NaN\n1 150 160\n"
                                "10 NaN 320\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("$bw_n2_2 << EOD\n0.1 60 NaN\n1 200 256\n"
                                "10 NaN 640\nEOD\n"));
  const std::string n2 = Section(s.text, "throughput_vs_bandwidth_n2.png");
  // x from 0.1/1.5 to 10·1.5; y from 60/1.5 to the loopback's 1000·1.5.
  EXPECT_THAT(n2, HasSubstr("set xrange [0.0666667:15]\n"
                            "set yrange [40:1500]\n"
                            "set ytics (\"60\" 60, \"105\" 105.322, "
                            "\"185\" 184.88, \"325\" 324.534, "
                            "\"570\" 569.679, \"1000\" 1000)\n"
                            "set xtics (\"0.1\" 0.1, \"1\" 1, \"10\" 10)\n"));
  EXPECT_THAT(
      n2, HasSubstr("plot 1000 with lines dashtype 3 linewidth 2 linecolor "
                    "rgb \"gray40\" title \"unshaped loopback "
                    "(Ring)\", \\\n"
                    "     $bw_n2_0 using 1:2 with linespoints linecolor 1 "
                    "pointtype 7 linewidth 2 title \"SPS\", \\\n"
                    "     $bw_n2_0 using 1:3 with linespoints linecolor 1 "
                    "pointtype 6 dashtype 2 linewidth 2 title \"SPS "
                    "(predicted)\", \\\n"
                    "     $bw_n2_1 using 1:2 with linespoints linecolor 2 "));
  EXPECT_THAT(n2, HasSubstr("$bw_n2_2 using 1:3 with linespoints linecolor 3 "
                            "pointtype 6 dashtype 2 linewidth 2 title \"Ring "
                            "(predicted)\"\n"));
  // n = 4: no unshaped run at n = 4, so no reference line; Ring has no
  // prediction, so no dashed Ring line.
  const std::string n4 = Section(s.text, "throughput_vs_bandwidth_n4.png");
  EXPECT_THAT(n4, Not(HasSubstr("unshaped")));
  EXPECT_THAT(n4, Not(HasSubstr("title \"Ring (predicted)\"")));
  EXPECT_THAT(s.text, HasSubstr("$bw_n4_0 << EOD\n0.1 150 158.025\n"
                                "1 180 320\nEOD\n"));
}

TEST(LinkSweepTest, PlotPerLatencyWhenLatencyVaries) {
  LinkSweepPoint a = Point(1, 0, {Row("ring", 2, 200)});
  LinkSweepPoint b = Point(1, 200, {Row("ring", 2, 150)});
  LinkSweepPoint c = Point(0.1, 200, {Row("ring", 2, 50)});
  const PlotScript s = BandwidthPlotScript({a, b, c}, {2}, Options("/o"));
  ASSERT_EQ(s.images.size(), 2u);
  EXPECT_EQ(s.images[0].path, "throughput_vs_bandwidth_n2_0us.png");
  EXPECT_EQ(s.images[1].path, "throughput_vs_bandwidth_n2_200us.png");
  EXPECT_THAT(s.images[1].caption, HasSubstr("n = 2 workers, 200 µs latency"));
  EXPECT_THAT(s.text, HasSubstr("$bw_n2_l0_0 << EOD\n1 200 NaN\nEOD\n"));
  EXPECT_THAT(s.text,
              HasSubstr("$bw_n2_l1_0 << EOD\n0.1 50 NaN\n1 150 NaN\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("n = 2 workers, no added latency"));
}

TEST(LinkSweepTest, NothingToPlotWithoutShapedPoints) {
  const std::vector<LinkSweepPoint> loopback = {
      Point(0, 0, {Row("ring", 2, 1000)})};
  EXPECT_TRUE(BandwidthPlotScript(loopback, {2}, Options("/o")).images.empty());
  // Nothing to draw: no gnuplot run, so even a broken one succeeds.
  absl::StatusOr<std::vector<ReportImage>> images =
      DrawBandwidthPlots("/bin/false", loopback, {2}, Options("/o"));
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_TRUE(images->empty());
}

TEST(LinkSweepTest, GnuplotDrawsPngs) {
  absl::StatusOr<std::string> gnuplot = FindProgram("gnuplot");
  if (!gnuplot.ok()) GTEST_SKIP() << gnuplot.status();
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/link_sweep";
  std::filesystem::create_directories(dir);
  absl::StatusOr<std::vector<ReportImage>> images =
      DrawBandwidthPlots(*gnuplot, Sweep(), {2, 4}, Options(dir));
  ASSERT_TRUE(images.ok()) << images.status();
  ASSERT_EQ(images->size(), 2u);
  for (const ReportImage& image : *images) {
    std::ifstream in(dir + "/" + image.path, std::ios::binary);
    std::string magic(8, '\0');
    in.read(magic.data(), magic.size());
    EXPECT_EQ(magic, "\x89PNG\r\n\x1a\n") << image.path;
    EXPECT_GT(std::filesystem::file_size(dir + "/" + image.path), 1000u)
        << image.path;
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/link_sweep.gp"));
}

TEST(LinkSweepTest, BrokenGnuplotFails) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/link_sweep_broken";
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(
      DrawBandwidthPlots("/bin/false", Sweep(), {2}, Options(dir)).ok());
}

}  // namespace
}  // namespace ringside
