#include "experiments/report/plots.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ReportRow Row(const std::string& strategy, int prm_srv,
              std::vector<double> utilization, double throughput) {
  ReportRow row = testing::NamedRow(strategy);
  row.prm_srv = prm_srv;
  row.utilization = std::move(utilization);
  row.throughput = throughput;
  return row;
}

std::vector<ReportRow> Sweep() {
  return {Row("baseline", 0, {0.9}, 100), Row("sps", 1, {0.8}, 90),
          Row("dps", 2, {0.85}, 95), Row("sps", 1, {0.5, 0.4}, 150)};
}

PlotOptions Options(const std::string& dir) {
  PlotOptions o;
  o.dir = dir;
  o.subtitle = "real compute; 2 cores (nproc), \"Test\" CPU";
  return o;
}

TEST(PlotsTest, GnuplotStringEscapes) {
  EXPECT_EQ(GnuplotString("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
}

TEST(PlotsTest, ScriptDrawsUtilizationBarsPerN) {
  const PlotScript s = GnuplotScript(Sweep(), {1, 2}, Options("/o"));
  EXPECT_THAT(s.text, HasSubstr("set terminal pngcairo size 960,540 "
                                "noenhanced\nset output \"/o/speedup.png\""));
  EXPECT_THAT(s.text, HasSubstr("set terminal pngcairo size 960,540 "
                                "noenhanced\nset output "
                                "\"/o/utilization_n1.png\""));
  // Wider for many strategies: 130 px per group + 240.
  std::vector<ReportRow> many = {Row("baseline", 0, {0.9}, 100)};
  for (int i = 0; i < 7; ++i) {
    many.push_back(Row("s" + std::to_string(i), 0, {0.5}, 90));
  }
  EXPECT_THAT(GnuplotScript(many, {1}, Options("/o")).text,
              HasSubstr("set terminal pngcairo size 1280,540 noenhanced\n"));
  EXPECT_THAT(s.text, HasSubstr("$util_n2 << EOD\n"
                                "\"Baseline\" 90.00 0\n"
                                "\"SPS\" 50.00 40.00\n"
                                "EOD\n"));
  EXPECT_THAT(s.text, HasSubstr("$util_n1 << EOD\n\"Baseline\" 90.00\n"
                                "\"SPS\" 80.00\n\"DPS\" 85.00\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("set output \"/o/utilization_n2.png\"\n"));
  EXPECT_THAT(s.text,
              HasSubstr("set title \"Per-worker utilization, n = 2 workers\\n"
                        "real compute; 2 cores (nproc), \\\"Test\\\" CPU\"\n"));
  EXPECT_THAT(s.text, HasSubstr("set style histogram clustered"));
  EXPECT_THAT(s.text, HasSubstr("plot $util_n2 using 2:xtic(1) title \"W0\", "
                                "\\\n     $util_n2 using 3 title \"W1\"\n"));
  ASSERT_EQ(s.images.size(), 3u);
  EXPECT_EQ(s.images[0].path, "utilization_n1.png");
  EXPECT_EQ(s.images[1].path, "utilization_n2.png");
  EXPECT_THAT(s.images[1].caption, HasSubstr("(real compute)"));
}

TEST(PlotsTest, ScriptDrawsSpeedupWithTheLinearLine) {
  const PlotScript s = GnuplotScript(Sweep(), {1, 2}, Options("/o"));
  // n, then sps and dps; dps has no n = 2 run.
  EXPECT_THAT(s.text, HasSubstr("$speedup << EOD\n1 0.9000 0.9500\n"
                                "2 1.5000 NaN\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("set output \"/o/speedup.png\"\n"));
  EXPECT_THAT(s.text, HasSubstr("set xtics (\"1\" 1, \"2\" 2)\n"));
  EXPECT_THAT(s.text, HasSubstr("plot x with lines dashtype 2 linecolor rgb "
                                "\"gray40\" title \"linear (ideal)\""));
  EXPECT_THAT(s.text, HasSubstr("$speedup using 1:2 with linespoints "
                                "pointtype 7 linewidth 2 title \"SPS\""));
  EXPECT_THAT(s.text, HasSubstr("$speedup using 1:3 with linespoints "
                                "pointtype 7 linewidth 2 title \"DPS\""));
  EXPECT_EQ(s.images.back().path, "speedup.png");
}

// gnuplot's colours repeat after 8 series: the 9th on is dashed, with
// squares.
TEST(PlotsTest, SeriesAfterTheEighthAreDashed) {
  std::vector<ReportRow> many = {Row("baseline", 0, {0.9}, 100)};
  for (int i = 0; i < 9; ++i) {
    many.push_back(Row("s" + std::to_string(i), 0, {0.5}, 90));
  }
  const std::string text = GnuplotScript(many, {1}, Options("/o")).text;
  EXPECT_THAT(text, HasSubstr("$speedup using 1:9 with linespoints "
                              "pointtype 7 linewidth 2"));
  EXPECT_THAT(text, HasSubstr("$speedup using 1:10 with linespoints "
                              "pointtype 5 dashtype 2 linewidth 2"));
}

// Sweep() with memory on the n = 2 sps row: P = 5 MB, s = 1.
std::vector<ReportRow> SweepWithMemory() {
  std::vector<ReportRow> rows = Sweep();
  rows[3].worker_held_bytes = 12'500'000;
  rows[3].worker_peak_rss_bytes = 40'000'000;
  rows[3].server_state_bytes = 9'000'000;
  rows[3].model_bytes = 5'000'000;
  rows[3].optimizer_state_per_param = 1;
  return rows;
}

TEST(PlotsTest, MemoryChartPerNWhereRunsReportIt) {
  const PlotScript s = GnuplotScript(SweepWithMemory(), {1, 2}, Options("/o"));
  // Mem/worker, formula 2P, peak RSS, Mem/server, formula (2 + s)P; no
  // server peak, so the chart for n = 1 (no memory reported) is absent.
  EXPECT_THAT(s.text, HasSubstr("$memory_n2 << EOD\n\"SPS\" 12.50 10.00 "
                                "40.00 9.00 15.00\nEOD\n"));
  EXPECT_THAT(s.text, Not(HasSubstr("$memory_n1")));
  EXPECT_THAT(s.text, HasSubstr("set output \"/o/memory_n2.png\"\n"));
  EXPECT_THAT(s.text, HasSubstr("using 3 title \"formula\""));
  ASSERT_EQ(s.images.size(), 4u);
  EXPECT_EQ(s.images[2].path, "memory_n2.png");
  EXPECT_THAT(s.images[2].caption, HasSubstr("cost model's formula"));
}

TEST(PlotsTest, MemoryChartLeavesOutColumnsNoRowHas) {
  // Workers without servers and without s: only Mem/worker and peak RSS
  // have values (gnuplot refuses a histogram column with no valid point).
  std::vector<ReportRow> rows = {Row("ring", 0, {0.5, 0.4}, 150)};
  rows[0].worker_held_bytes = 20'000'000;
  rows[0].worker_peak_rss_bytes = 30'000'000;
  const PlotScript s = GnuplotScript(rows, {2}, Options("/o"));
  EXPECT_THAT(s.text, HasSubstr("plot $memory_n2 using 2:xtic(1) title "
                                "\"Mem/worker\", \\\n     $memory_n2 using "
                                "4 title \"peak RSS/worker\"\n"));
  EXPECT_THAT(s.text, Not(HasSubstr("title \"Mem/server\"")));
}

TEST(PlotsTest, NoSpeedupPlotWithoutABaseline) {
  const PlotScript s =
      GnuplotScript({Row("sps", 1, {0.5, 0.4}, 150)}, {2}, Options("/o"));
  EXPECT_THAT(s.text, Not(HasSubstr("speedup")));
  ASSERT_EQ(s.images.size(), 1u);
}

TEST(PlotsTest, EmulatedComputeInCaptions) {
  std::vector<ReportRow> rows = Sweep();
  for (ReportRow& r : rows) r.emulated = true;
  const PlotScript s = GnuplotScript(rows, {1, 2}, Options("/o"));
  for (const ReportImage& image : s.images) {
    EXPECT_THAT(image.caption, HasSubstr("(emulated compute)"));
  }
}

// Sweep() with loss curves on the baseline and the n = 2 sps run.
std::vector<ReportRow> SweepWithCurves() {
  std::vector<ReportRow> rows = Sweep();
  rows[0].curve = {{4, 160, 0.5, 2.0}, {9, 320, 1.0, 1.25}};
  rows[3].curve = {{4, 320, 0.25, 1.5}, {7, 512, 0.5, 1.125}};
  return rows;
}

TEST(PlotsTest, NoLossPlotsWithoutCurves) {
  const PlotScript s = GnuplotScript(Sweep(), {1, 2}, Options("/o"));
  EXPECT_THAT(s.text, Not(HasSubstr("loss")));
  for (const ReportImage& image : s.images) {
    EXPECT_THAT(image.path, Not(HasSubstr("loss")));
  }
}

TEST(PlotsTest, LossAgainstTimeAndSamplesPerNWithCurves) {
  PlotOptions o = Options("/o");
  o.target_loss = 1.25;
  const PlotScript s = GnuplotScript(SweepWithCurves(), {1, 2}, o);
  // n = 1: only the baseline has a curve (sps n=1 and dps have none).
  EXPECT_THAT(s.text, HasSubstr("$loss_n1_0 << EOD\n4 160 0.5000 2\n"
                                "9 320 1.0000 1.25\nEOD\n"));
  EXPECT_THAT(s.text, Not(HasSubstr("$loss_n1_1")));
  // n = 2: the baseline, then sps.
  EXPECT_THAT(s.text, HasSubstr("$loss_n2_1 << EOD\n4 320 0.2500 1.5\n"
                                "7 512 0.5000 1.125\nEOD\n"));
  EXPECT_THAT(s.text, HasSubstr("set output \"/o/loss_time_n2.png\"\n"
                                "set title \"Validation loss against "
                                "training wall time, n = 2 workers\\n"));
  EXPECT_THAT(s.text,
              HasSubstr("set xlabel \"training wall time (s), evaluations "
                        "excluded\"\nset ylabel \"validation loss (rank "
                        "0), log scale\"\nset xrange [0:*]\nset logscale "
                        "y\nset autoscale yfix\n"));
  // Wall time is column 3, samples column 2; the target a dashed line.
  EXPECT_THAT(s.text,
              HasSubstr("plot 1.25 with lines dashtype 2 linecolor rgb "
                        "\"gray40\" title \"target loss 1.2500\", \\\n"
                        "     $loss_n2_0 using 3:4 with linespoints pointtype "
                        "7 linewidth 2 title \"Baseline\", \\\n"
                        "     $loss_n2_1 using 3:4 with linespoints pointtype "
                        "7 linewidth 2 title \"SPS\"\n"));
  EXPECT_THAT(s.text, HasSubstr("$loss_n2_1 using 2:4 with linespoints"));
  EXPECT_THAT(s.text, HasSubstr("set xlabel \"global training samples\"\n"));
  std::vector<std::string> paths;
  for (const ReportImage& image : s.images) paths.push_back(image.path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "utilization_n1.png", "utilization_n2.png",
                       "speedup.png", "loss_time_n1.png", "loss_samples_n1.png",
                       "loss_time_n2.png", "loss_samples_n2.png"}));
  EXPECT_THAT(s.images.back().caption,
              HasSubstr("against global training samples by strategy, n = "
                        "2 workers"));
  // Without a target, no dashed line.
  EXPECT_THAT(GnuplotScript(SweepWithCurves(), {1, 2}, Options("/o")).text,
              Not(HasSubstr("target loss")));
}

TEST(PlotsTest, FindProgram) {
  EXPECT_TRUE(FindProgram("sh").ok());
  EXPECT_EQ(FindProgram("/no/such/gnuplot").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FindProgram("no-such-program-ringside").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(PlotsTest, GnuplotDrawsPngs) {
  absl::StatusOr<std::string> gnuplot = FindProgram("gnuplot");
  if (!gnuplot.ok()) GTEST_SKIP() << gnuplot.status();
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/plots";
  std::filesystem::create_directories(dir);
  absl::StatusOr<std::vector<ReportImage>> images =
      DrawPlots(*gnuplot, SweepWithMemory(), {1, 2}, Options(dir));
  ASSERT_TRUE(images.ok()) << images.status();
  ASSERT_EQ(images->size(), 4u);  // utilization ×2, memory, speedup
  for (const ReportImage& image : *images) {
    std::ifstream in(dir + "/" + image.path, std::ios::binary);
    std::string magic(8, '\0');
    in.read(magic.data(), magic.size());
    EXPECT_EQ(magic, "\x89PNG\r\n\x1a\n") << image.path;
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/plots.gp"));
}

TEST(PlotsTest, GnuplotDrawsLossPlots) {
  absl::StatusOr<std::string> gnuplot = FindProgram("gnuplot");
  if (!gnuplot.ok()) GTEST_SKIP() << gnuplot.status();
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/loss";
  std::filesystem::create_directories(dir);
  PlotOptions o = Options(dir);
  o.target_loss = 1.25;
  absl::StatusOr<std::vector<ReportImage>> images =
      DrawPlots(*gnuplot, SweepWithCurves(), {1, 2}, o);
  ASSERT_TRUE(images.ok()) << images.status();
  ASSERT_EQ(images->size(), 7u);  // utilization ×2, speedup, loss ×4
  for (const ReportImage& image : *images) {
    EXPECT_GT(std::filesystem::file_size(dir + "/" + image.path), 0u)
        << image.path;
  }
}

TEST(PlotsTest, BrokenGnuplotFails) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/broken";
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(DrawPlots("/bin/false", Sweep(), {1, 2}, Options(dir)).ok());
}

}  // namespace
}  // namespace ringside
