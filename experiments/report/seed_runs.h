// A row trained with several seeds (compare --seeds): each seed's training
// run kept in ReportRow::seed_runs, the row's final loss and time to the
// target their medians, and the final-loss gap to the exact strategies
// taken seed by seed (the same seed's data and initial parameters on both
// sides), so that a lossy row's cost in loss is shown with its spread.
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_SEED_RUNS_H_
#define RINGSIDE_EXPERIMENTS_REPORT_SEED_RUNS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/report/report.h"

namespace ringside {

// The median (lower middle for an even count), lowest and highest of
// `values`; nullopt when empty.
std::optional<ValueSpread> SpreadOf(std::vector<double> values);

// `first` (the first seed's training run) with seed_runs from `runs` (each
// seed with its run's row, in seed order, the first seed's first) and its
// eval_loss the median over the seeds that have one. One run: `first`
// unchanged.
ReportRow WithSeedRuns(ReportRow first,
                       const std::vector<std::pair<uint64_t, ReportRow>>& runs);

// The spread of the row's final loss over its seeds (nullopt: fewer than
// two seeds with a loss).
std::optional<ValueSpread> SeedLossSpread(const ReportRow& row);

// The spread of the row's time to target over the seeds that reached it,
// and how many did (nullopt spread: none).
std::pair<std::optional<ValueSpread>, int> SeedTimeSpread(const ReportRow& row);

// Sets every row's loss_gap: per seed, its final validation loss less the
// mean of the rows `exact` accepts at the same worker count (n ≥ 2) and
// seed; nullopt for a row with fewer than two seeds or no such exact row.
void SetLossGaps(const std::function<bool(const ReportRow&)>& exact,
                 std::vector<ReportRow>* rows);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_SEED_RUNS_H_
