// Loss against time: each run's validation-loss curve (rank 0's
// {"event":"eval","step","samples","train_wall_s","loss"} records, one
// every --eval_every steps and after the last) and the time each run took
// to reach one target loss.
//
// The target is the user's (--target_loss) or, by default, a loss every
// run of the sweep reaches: the largest, over the runs with a curve, of
// each run's lowest loss. A run's time to target is the train_wall_s of
// its first evaluation at or below the target (evaluations excluded from
// that time by the workers); nullopt when it never got there.
//
// Thread-safety: stateless functions, safe to call concurrently.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_LOSS_CURVES_H_
#define RINGSIDE_EXPERIMENTS_REPORT_LOSS_CURVES_H_

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/report.h"

namespace ringside {

// Whether `record` is an evaluation record: an object whose "event" is
// "eval".
bool IsEvalRecord(const nlohmann::json& record);

// Sets row->curve from rank 0's records (any records; only IsEvalRecord
// ones with numeric step, samples, train_wall_s and loss count), sorted by
// step. Emulated rows get none: the synthetic model's loss means nothing
// (as with ReportRow::eval_loss).
void SetEvalCurve(const std::vector<nlohmann::json>& records, ReportRow* row);

struct TargetLoss {
  double loss = 0;
  bool given = false;  // --target_loss; false: reached by every run
  // Not given: only the exact strategies' runs set it (a lossy or stale
  // row is timed against it, never the one that sets it).
  bool exact_only = false;
};

// `given` when > 0, else the largest of the per-row lowest curve losses
// over the rows `exact` accepts (all rows when it is empty), each seed's
// curve of a row trained with several (ReportRow::seed_runs) counting.
// nullopt when no such row has a curve: there is nothing to time.
std::optional<TargetLoss> ChooseTargetLoss(
    const std::vector<ReportRow>& rows, double given,
    const std::function<bool(const ReportRow&)>& exact = nullptr);

// train_wall_s of the first point of `curve` (or `row`'s) with loss <=
// target; nullopt when none is.
std::optional<double> TimeToTarget(const std::vector<EvalPoint>& curve,
                                   double target);
std::optional<double> TimeToTarget(const ReportRow& row, double target);

// Sets every row's time_to_target_s (TimeToTarget; nullopt for all rows
// without a target); for a row trained with several seeds, each seed
// run's, and the row's the median over them (the lower middle of an even
// count), a seed that never reached the target counting as slower than
// any that did.
void SetTimesToTarget(const std::optional<TargetLoss>& target,
                      std::vector<ReportRow>* rows);

// The report's line on the target, e.g. "Target loss 1.2340 (reached by
// every run; --target_loss sets it)" or "Target loss 1.5000
// (--target_loss)".
std::string TargetLossLine(const TargetLoss& target);

// {"loss": x, "source": "given" | "reached by every run"}; null without a
// target.
nlohmann::json TargetLossJson(const std::optional<TargetLoss>& target);

// loss_curves.csv: a header line "strategy,parallel_type,workers,step,
// samples,train_wall_s,loss", then one line per curve point of every row,
// in row order.
std::string LossCurvesCsv(const std::vector<ReportRow>& rows);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_LOSS_CURVES_H_
