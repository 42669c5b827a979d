// The report of one compare sweep: the hardware the runs had, the notes
// under the tables (a busy or oversubscribed machine, how the rows were
// measured, the network, the DDP row, flags not passed, failures), the
// gnuplot plots, the cost model's predictions beside the measured runs,
// and the Markdown document, printed to stdout. Blocking (it probes the
// hardware and runs gnuplot); call from one thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_REPORT_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/sweep_plan.h"
#include "experiments/comparison/sweep_runner.h"
#include "experiments/report/hardware.h"
#include "experiments/report/run_manifest.h"
#include "experiments/report/sweep_report.h"

namespace ringside::compare {

// The report: printed once, written to compare.{md,csv,json} and, with
// --results_md, there too.
struct SweepReport {
  SweepDocument doc;
  std::string markdown;
  std::string hardware_line;
  Hardware hardware;
  RunManifest manifest;
  double load_end = 0;
  std::vector<std::string> notes;
  std::vector<ReportImage> images;
  nlohmann::json cost_model;
};

// The report of `plan`'s sweep that gave `out`, run as `command` (the
// report quotes it), with the plots `plots` asks for (or a note on why
// there are none) drawn into the plan's folder. Prints the Markdown.
SweepReport ReportSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const PlotSettings& plots, const std::string& command);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_REPORT_H_
