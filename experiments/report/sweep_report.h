// Sweep report: the outputs of `compare` over a worker-count sweep (e.g.
// n = 1, 2, 4): the baseline runs once with one worker, every other
// strategy once per n. Built from the report.h rows:
//
//  - per n, the study-format utilization table (Parallel type, PrmSrv,
//    W0..W(n-1), Total, throughput, speedup, efficiency), the baseline
//    first (UtilizationRows + report.h's MarkdownTable/JsonReport);
//  - across n, throughput, speedup and scaling-efficiency tables, one line
//    per strategy and one column per n (ScalingMarkdown);
//  - one CSV line per run (SweepCsv), a JSON document (SweepJson) and a
//    Markdown document with everything (SweepMarkdown).
//
// Every output says whether compute was real or emulated (ComputeLabel; the
// rows' "(emulated)" label) and, where the caller gives it, the hardware.
//
// Thread-safety: stateless functions, safe to call concurrently.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_SWEEP_REPORT_H_
#define RINGSIDE_EXPERIMENTS_REPORT_SWEEP_REPORT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cost/cost_model.h"
#include "experiments/report/report.h"

namespace ringside {

// "real" when no row ran emulated compute, "emulated" when every row did,
// "mixed" otherwise; "unknown" without rows.
std::string ComputeLabel(const std::vector<ReportRow>& rows);

// One sentence saying what ComputeLabel means for these rows, e.g.
// "emulated: a synthetic model sleeps the device time a real model would
// take; communication is real." (mixed: names the emulated strategies).
std::string ComputeSentence(const std::vector<ReportRow>& rows);

// The worker counts in `rows`' non-baseline rows, ascending, without
// duplicates.
std::vector<int> SweepWorkers(const std::vector<ReportRow>& rows);

// The first row of `strategy` in `rows`; nullptr when there is none.
const ReportRow* FirstRowOf(const std::vector<ReportRow>& rows,
                            const std::string& strategy);

// The non-baseline strategies of `rows`, in first-seen order.
std::vector<std::string> SweepStrategies(const std::vector<ReportRow>& rows);

// The study table's rows for n workers: the first baseline row, then every
// non-baseline row with n workers, in the order of `rows`.
std::vector<ReportRow> UtilizationRows(const std::vector<ReportRow>& rows,
                                       int n);

enum class ScalingMetric { kThroughput, kSpeedup, kEfficiency };

// Markdown table of `metric` across `workers`: columns Parallel type,
// PrmSrv, "n=1", "n=2", ...; a line for the baseline (its n=1 cell only),
// one per strategy ("-" where it has no run), and for kSpeedup a last line
// "Linear (ideal)" = n. Throughput with 1 decimal, the others with 2.
std::string ScalingMarkdown(const std::vector<ReportRow>& rows,
                            const std::vector<int>& workers,
                            ScalingMetric metric);

// One CSV line per row: strategy, parallel_type, workers, prm_srv,
// W0..W(max-1) (fractions; empty past the row's workers), total,
// throughput, speedup, scaling_eff, eval_loss, emulated, device, hardware,
// then the memory columns in MB (empty where not reported):
// worker_held_mb, worker_optimizer_mb, worker_peak_rss_mb,
// server_state_mb, server_peak_rss_mb, and the cost model's memory formula
// for the row (experiments/cost/cost_model.h): formula_worker_mb,
// formula_server_mb, time_to_target_s (loss_curves.h; 4 decimals, empty
// where not reached or without a curve), and last the row's runs (1 when
// run once), its slowest and fastest run's throughput and its spread
// (report.h's ThroughputSpread; empty for a row run once).
std::string SweepCsv(const std::vector<ReportRow>& rows,
                     const std::string& hardware);

// {"workers":[..], "compute":ComputeLabel,
//  "utilization":[{"workers":n, "table":JsonReport(UtilizationRows(n))}..],
//  "scaling":[{"strategy","parallel_type","prm_srv","emulated",
//              "points":[{"workers","throughput","speedup","scaling_eff"}]}],
//  "rows":JsonReport(rows)["rows"],
//  "memory":[{"strategy","parallel_type","workers","prm_srv",
//             "worker_held_bytes","worker_optimizer_bytes",
//             "worker_peak_rss_bytes","server_state_bytes",
//             "server_peak_rss_bytes","formula","formula_worker_bytes",
//             "formula_server_bytes"}] (rows reporting memory; null where
//  a field is not reported or the strategy has no memory formula)}; speedup/efficiency null without a baseline.
nlohmann::json SweepJson(const std::vector<ReportRow>& rows,
                         const std::vector<int>& workers);

// An image for the Markdown document.
struct ReportImage {
  std::string path;     // as the document links it (relative to it)
  std::string caption;  // alt text and caption
};

struct SweepDocument {
  std::string title = "ringside compare";  // the "# " heading
  std::string hardware;                    // HardwareLine; "" = not shown
  std::string run;      // one line on the configuration; "" = not shown
  std::string command;  // command that made it; "" = not shown
  // run_manifest.h's RunManifestLine (commit, kernel, governor,
  // libraries); "" = not shown.
  std::string manifest;
  // loss_curves.h's TargetLossLine, said before the tables with what Time
  // to target means; "" = not shown.
  std::string target_loss;
  std::vector<ReportImage> images;
  // Markdown body of "## Cost model vs measured" (prediction_report.h's
  // PredictionMarkdown); "" = not shown.
  std::string cost_model;
  std::vector<std::string> notes;  // paragraphs at the end
};

// What the cost model's memory formula gives for `r` (the formula of its
// registry's modelled_as, P = the model's bytes, the run's s, n and K);
// nullopt where the run does not report what the formula needs or the
// strategy has none.
std::optional<MemoryPerRank> FormulaMemory(const ReportRow& r);

// "## Memory per rank" body: per row the largest worker's held bytes (of
// them optimizer state) and peak RSS, and the largest server's state and
// peak RSS, in MB ("-" where not reported), each held figure beside the
// cost model's memory formula's value, with what they count; "" when no
// row reports memory.
std::string MemoryMarkdown(const std::vector<ReportRow>& rows);

// The traffic table: per row at n >= 2 the bytes rank 0 sent per step,
// that against a ring all-reduce of the model (AllReduceShare) and how its
// updates compare with the exact strategies'; "" when no row reports its
// bytes.
std::string TrafficMarkdown(const std::vector<ReportRow>& rows);

// The seeds table: per row trained with several seeds (seed_runs.h) its
// final loss, its gap to the exact strategies' and its time to target,
// each as the median and range over the seeds; "" when no row has seeds.
std::string SeedMarkdown(const std::vector<ReportRow>& rows);

// The whole report in Markdown: heading; Hardware, Compute (ComputeLabel +
// ComputeSentence), Run and Command lines; the target loss (when given);
// "## Utilization, n = N" with the study table per n of `workers`; "##
// Throughput", "## Speedup", "## Scaling efficiency" across n; "## Memory
// per rank (MB)" (when reported); "## Cost model vs measured"; "## Plots"
// with the images; "## Notes".
std::string SweepMarkdown(const std::vector<ReportRow>& rows,
                          const std::vector<int>& workers,
                          const SweepDocument& doc);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_SWEEP_REPORT_H_
