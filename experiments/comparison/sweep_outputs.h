// The files of one compare sweep: compare.{md,csv,json} (and
// loss_curves.csv when a run has a loss curve) in the plan's folder and,
// when asked, the report as a Markdown file elsewhere with its plots
// copied to results/ beside it. compare.json holds the configuration, the
// hardware, the tables with the loss curves, the target loss, the cost
// model, every run's final records, the failures and the notes. Blocking
// file writes; call from one thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_OUTPUTS_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_OUTPUTS_H_

#include <string>

#include "absl/status/status.h"
#include "experiments/comparison/compare_report.h"
#include "experiments/comparison/sweep_plan.h"
#include "experiments/comparison/sweep_runner.h"

namespace ringside::compare {

// Writes the sweep's files (`command` as the user ran compare) and, with
// `results_md` not empty, that Markdown file (relative to where the user
// ran compare) with its images beside it; says on stderr what it wrote.
// INTERNAL naming the file that could not be written.
absl::Status WriteSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const SweepReport& r, const std::string& command,
                        const std::string& results_md);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_OUTPUTS_H_
