// compare's measurement protocol, per row (a strategy at one n): a
// training run of --steps steps, the same for every row, gives the loss
// curve, the validation loss and the time to the target; then --repeats
// timing runs, without evaluation, each measuring a window sized from the
// row's fastest step so far (TimingWindowSteps), the rounds interleaved through
// all rows. The row the tables show is the timing run with the median step
// time, whole (its utilization, throughput, compute and memory together),
// so that a run slowed by the machine (another tenant, a page-cache flush)
// neither sets the row nor is averaged into it, with the training run's
// loss curve (WithTrainingRun); the row keeps every timing run's step
// time, throughput and utilization, which the reports give as the
// run-to-run spread.
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_
#define RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_

#include <cstdint>
#include <vector>

#include "experiments/report/report.h"

namespace ringside {

// The run with the median step time among `runs` (not empty; for an even
// count the faster of the two middle runs), with run_step_s,
// run_throughput and run_total_utilization set to every run's, in the
// given order (left empty for a single run). A run whose records lack a
// step time
// (step_s <= 0) counts as slower than every run with one.
ReportRow MedianRun(const std::vector<ReportRow>& runs);

// The slowest over the fastest of a row's runs' step times (its
// run_step_s; >= 1), leaving out runs without one (<= 0); 1 for a row run
// once or whose runs lack step times.
double RunSpread(const std::vector<double>& run_step_s);

// The most steps a timing run measures, whatever the window asks.
inline constexpr int64_t kMaxTimingSteps = 100000;

// The measured steps of a timing run: enough for `min_window_s` at a step
// of `step_s` (the training run's), and at least `min_steps`; at most
// kMaxTimingSteps. A step time <= 0 (not measured) gives `min_steps`.
int64_t TimingWindowSteps(double step_s, double min_window_s,
                          int64_t min_steps);

// The row of the tables: `timing` (a MedianRun of timing runs) with the
// training run's loss curve, validation loss, time to the target and seed
// runs.
ReportRow WithTrainingRun(ReportRow timing, const ReportRow& training);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_
