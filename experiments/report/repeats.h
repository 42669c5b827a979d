// Repeated runs of one row (compare --repeats=N: every strategy at every n
// run N times, the rounds one after another). The row the tables show is
// the run with the median step time, whole (its utilization, throughput,
// compute, memory and loss curve together), so that a run slowed by the
// machine (another tenant, a page-cache flush) neither sets the row nor is
// averaged into it; the row keeps every run's step time, which the
// reports give as the run-to-run spread.
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_
#define RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_

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

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_REPEATS_H_
