// Running a planned compare sweep: every row's training run (with evaluation,
// for the loss curves; with --seeds, one per seed, seed by seed through the
// rows: experiments/report/seed_runs.h), then the plan's timing rounds through
// the rows whose training run finished, the baseline in every round, each
// timing window sized from the row's fastest step so far
// (experiments/report/repeats.h). A progress line goes to stderr before each
// run and its result or failure after it; a failing run is recorded and
// skipped. The baseline's training run calibrates the cost model when the plan
// has a link. Blocking (it runs the jobs one after another); call from one
// thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_RUNNER_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_RUNNER_H_

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiments/comparison/cost_model_link.h"
#include "experiments/comparison/sweep_plan.h"
#include "experiments/report/loss_curves.h"
#include "experiments/report/report.h"

namespace ringside::compare {

// Another process's CPU during a run beyond this share of a core names the
// run in the report's notes.
constexpr double kBusyOtherCores = 0.25;

// What the runs gave: a report row per run that finished, the JSON of each
// run and of each failure, and what the notes need to say about them.
struct SweepOutcome {
  std::vector<ReportRow> rows;       // with their times to `target`
  std::optional<TargetLoss> target;  // none without loss curves
  nlohmann::json runs = nlohmann::json::array();
  nlohmann::json failures = nlohmann::json::array();
  // Row name -> the worker flags not passed to it (it does not read them).
  std::map<std::string, std::string> ignored_flags;
  std::vector<std::string> oversubscribed;
  std::set<std::string> networks;  // what the runs ran on, when shaping
  // The DDP rows' exported data (worker --export_batches), by directory
  // (per n and step count): written once, reused by the later rounds.
  std::set<std::string> ddp_data;
  // Runs during which other processes kept more than kBusyOtherCores busy:
  // the run, and the cores they used on average.
  std::vector<std::pair<std::string, double>> busy_runs;
  // Runs whose Gloo event loop starved (StarvedLoopWarnings), with why.
  std::vector<std::string> starved_loops;
  double most_other_cores = 0;  // over every run
  double most_steal_cores = 0;
  // The timing runs' measured windows (step × window steps), seconds.
  double shortest_window_s = std::numeric_limits<double>::infinity();
  double longest_window_s = 0;
  // The cost model's calibration (after the baseline), or why there is
  // none.
  SweepCalibration calibration;
};

// Runs `plan`: each row is then its median timing run with its training
// run's loss curve (with no timing rounds, its training run), with its
// time to the target loss.
SweepOutcome RunSweep(const SweepPlan& plan);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_RUNNER_H_
