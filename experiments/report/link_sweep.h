// Link sweep report: compare's whole worker sweep run once per link point
// (--link_gbit × --link_latency_us; gbit 0 = unshaped loopback), and where
// the fastest strategy changes with the link.
//
//  - The crossover table (CrossoverTable; CrossoverMarkdown, CrossoverCsv
//    and CrossoverJson render the same rows): per link point and n, the
//    fastest strategy measured and its throughput, the runner-up and the
//    margin (fastest / runner-up throughput), the fastest the cost model
//    predicts and its throughput, and whether the two agree.
//  - throughput_vs_bandwidth_n<N>.png per n (BandwidthPlotScript,
//    DrawBandwidthPlots): throughput against link bandwidth.
//
// Strategies are told apart by their display label (ParallelTypeLabel, so
// "SPS" and "SPS (emulated)" differ). At n the rows considered are those
// with workers() == n (at n = 1 that includes the baseline); where several
// rows at n share a label (variants), the fastest counts. Throughputs are
// global samples/s.
//
// Predicted throughput of a predicted run (one with a Prediction whose
// step_s > 0; entries without one are ignored):
//  - at a measured point, from the point's row it predicts (same strategy,
//    label, workers, prm_srv and measured step time): the row's throughput
//    × its measured step_s / the predicted step_s (the same samples per
//    step, in the predicted time);
//  - otherwise (an unmeasured point, whose predictions come from another
//    point's rows, or no such row): workers × batch_per_worker / the
//    predicted step_s. batch_per_worker is the caller's (compare's
//    --batch_size) or, when 0, derived from the first row, in point order,
//    with throughput > 0 and step_s > 0: throughput × step_s / workers();
//    with neither, such runs have no predicted throughput.
//
// Exact strategies only are ranked (fastest, runner-up, predicted
// fastest): a lossy or stale one (RowUpdatesLabel; ring_fp16, async_ps
// with τ ≥ 1) is named apart, as faster_not_exact, where its measured
// throughput beats the fastest exact one's beyond a tie; the plots draw
// every strategy.
//
// Ties: two throughputs tie when the larger is within 2% of the smaller
// (larger / smaller <= 1.02, kCrossoverTie); the fastest is then marked
// "(tie)". The two fastest agree ("yes") when the predicted fastest ties
// with (or is) the measured fastest in the measured throughputs, or the
// measured fastest ties with (or is) the predicted fastest in the predicted
// ones; "no" otherwise; "-" when either side has none.
//
// The plots: x = link bandwidth in Gbit/s on a log axis, shaped points only
// (gbit > 0; per bandwidth, the first point with a throughput at n); y =
// throughput on a log axis. Per strategy one solid line with filled points
// for measured and a dashed line with open points in the same colour for
// predicted, one data block holding both (gnuplot's colours repeat after 8
// strategies: from the 9th on, the points are squares). When the shaped
// points have several latencies, one plot per latency and n, named
// throughput_vs_bandwidth_n<N>_<L>us.png (L as in LinkDirName); with one
// latency, throughput_vs_bandwidth_n<N>.png. The unshaped loopback, when a
// measured point has it, is a gray dotted horizontal line at the fastest
// throughput measured there at n (titled with that strategy); a plot with
// no positive throughput to draw is left out. Data are inline in the
// script, so BandwidthPlotScript is pure.
//
// Thread-safety: CrossoverTable, the renderers, LinkLabel, LinkDirName and
// BandwidthPlotScript are stateless and safe to call concurrently;
// DrawBandwidthPlots is blocking and may run on several threads for
// different folders.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_LINK_SWEEP_H_
#define RINGSIDE_EXPERIMENTS_REPORT_LINK_SWEEP_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/report/plots.h"
#include "experiments/report/prediction_report.h"
#include "experiments/report/report.h"
#include "experiments/report/sweep_report.h"

namespace ringside {

// Throughputs within this fraction of each other tie.
inline constexpr double kCrossoverTie = 0.02;

struct LinkPoint {
  double gbit = 0;        // link bandwidth, Gbit/s; 0: unshaped loopback
  double latency_us = 0;  // added latency, µs (ignored when gbit is 0)
};

// "unshaped loopback", "0.1 Gbit/s", "1 Gbit/s, 200 µs" (numbers as %g).
std::string LinkLabel(const LinkPoint& link);

// A file-system-safe folder name: "link_unshaped", "link_0.1gbit",
// "link_1gbit_200us" (numbers as %g; characters other than letters,
// digits, '.', '-' and '_' become '_').
std::string LinkDirName(const LinkPoint& link);

struct LinkSweepPoint {
  LinkPoint link;
  // false: this link could not be shaped here (e.g. network namespaces not
  // permitted); then `rows` is empty and predictions (if any) are based on
  // another point's rows.
  bool measured = true;
  std::string dir;                      // its compare output folder, relative
  std::vector<ReportRow> rows;          // measured rows (may be empty)
  std::vector<PredictedRun> predicted;  // the cost model's (may be empty)
};

// One strategy's throughput at one point and n.
struct LabelThroughput {
  std::string label;  // ParallelTypeLabel
  double throughput = 0;
  // Its updates against one worker's (RowUpdatesLabel): "exact", or what
  // makes them differ.
  std::string updates = "exact";
  bool exact() const { return updates == "exact"; }
};

struct PointThroughputs {
  std::vector<LabelThroughput> measured;   // fastest first
  std::vector<LabelThroughput> predicted;  // fastest first
};

// batch_per_worker when > 0, else derived from the points' rows as the
// file comment says; 0 when it cannot be.
double SweepBatchPerWorker(const std::vector<LinkSweepPoint>& points,
                           double batch_per_worker);

// The measured and predicted throughputs at `point` for n workers, one per
// label (the fastest of its rows), sorted fastest first (ties in throughput
// keep first-seen order); only throughputs > 0. `batch_per_worker` as
// SweepBatchPerWorker returns it.
PointThroughputs ThroughputsAt(const LinkSweepPoint& point, int n,
                               double batch_per_worker);

struct CrossoverRow {
  LinkPoint link;
  bool measured = true;  // LinkSweepPoint::measured
  std::string dir;
  int workers = 0;
  // Measured: the fastest and the runner-up ("" and 0 where none), the
  // margin fastest / runner-up (nullopt without a runner-up), and whether
  // they tie.
  std::string fastest;
  double fastest_throughput = 0;
  std::string runner_up;
  double runner_up_throughput = 0;
  std::optional<double> margin;
  bool tie = false;
  // Predicted likewise ("" and 0 where none).
  std::string predicted_fastest;
  double predicted_throughput = 0;
  std::string predicted_runner_up;
  double predicted_runner_up_throughput = 0;
  bool predicted_tie = false;
  std::string agree;  // "yes", "no" or "-"
  // The fastest lossy or stale strategy measured, where it beats the
  // fastest exact one beyond a tie: "Async PS (τ=2), stale (τ=2)" ("" and
  // 0: none).
  std::string faster_not_exact;
  double faster_not_exact_throughput = 0;
};

struct Crossover {
  std::vector<CrossoverRow> rows;  // points in order, then n ascending
  double batch_per_worker = 0;     // used for predictions (0: none)
};

// One row per point and n in `workers` (ascending) where the point has a
// measured or predicted throughput at n. `batch_per_worker`: compare's
// --batch_size; 0 = derived (SweepBatchPerWorker).
Crossover CrossoverTable(const std::vector<LinkSweepPoint>& points,
                         const std::vector<int>& workers,
                         double batch_per_worker = 0);

// Markdown table: Link | n | Fastest (measured) | Throughput (samples/s) |
// Runner-up | Margin | Fastest (predicted) | Predicted (samples/s) | Agree
// | Faster, not exact (measured), then a line saying what "exact" means.
// A tie appends " (tie)" to the fastest; throughputs with 1 decimal, the
// margin as "1.25×"; "-" where none. An unmeasured point's link reads
// "<label> (not measured)", and a note after the table says why. Ends in
// '\n'.
std::string CrossoverMarkdown(const Crossover& table);

// A header line, then one line per row: link_gbit, link_latency_us, link
// (LinkLabel), measured (true/false), dir, workers, fastest,
// fastest_throughput, runner_up, runner_up_throughput, margin, tie,
// predicted_fastest, predicted_throughput, predicted_tie, agree,
// faster_not_exact, faster_not_exact_throughput.
// Throughputs with 4 decimals, the margin with 4; empty where none.
std::string CrossoverCsv(const Crossover& table);

// {"tie_tolerance": 0.02, "batch_per_worker": b or null,
//  "rows": [{"link": {"gbit", "latency_us", "label", "dir_name"},
//            "measured", "dir", "workers", "fastest", "fastest_throughput",
//            "runner_up", "runner_up_throughput", "margin", "tie",
//            "predicted_fastest", "predicted_throughput",
//            "predicted_runner_up", "predicted_runner_up_throughput",
//            "predicted_tie", "agree", "faster_not_exact",
//            "faster_not_exact_throughput"}]}; null where none.
nlohmann::json CrossoverJson(const Crossover& table);

// The script drawing the throughput-against-bandwidth plots over `workers`
// (file comment), images by file name only. options.dir, terminal,
// subtitle and height apply, and width plus 240 px for the key on the
// right; target_loss is unused. Both axes span the values drawn (×/÷ 1.5),
// with the bandwidths as x tics and six labelled y tics.
PlotScript BandwidthPlotScript(const std::vector<LinkSweepPoint>& points,
                               const std::vector<int>& workers,
                               const PlotOptions& options,
                               double batch_per_worker = 0);

// Writes BandwidthPlotScript to options.dir + "/link_sweep.gp" and runs
// `gnuplot` on it (RunGnuplotScript: pngcairo, then png). Returns the
// images, each a non-empty file in options.dir; an empty list without
// running gnuplot when there is nothing to draw.
absl::StatusOr<std::vector<ReportImage>> DrawBandwidthPlots(
    const std::string& gnuplot, const std::vector<LinkSweepPoint>& points,
    const std::vector<int>& workers, const PlotOptions& options,
    double batch_per_worker = 0, absl::Duration timeout = absl::Seconds(60));

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_LINK_SWEEP_H_
