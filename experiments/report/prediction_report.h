// Prediction report: the cost model (cost_model.h) beside measured runs.
// For every measured row the strategy's step time is predicted from that
// run's own numbers: t_c = the slowest rank's measured compute per step
// (the pace of a synchronous step), M and T = the model's gradient bytes
// and tensors, n = the row's workers, K = its servers; the link (B, α), fusion threshold F and cycle τ come from the
// caller (compare measures the link or takes the shaped one). The error is
// (predicted − measured) / measured step time; positive = the model
// over-predicts.
//
// Each row is predicted by the formula its registry entry names
// (ReportRow::modelled_as; a strategy whose registry entry says it moves
// a fraction of the model's bytes as another's formula, e.g. "ring, M×0.5",
// the DDP row as ring); the row's variant gives hierarchical its ranks per
// host ("2×4": r = 4), and the final record's "staleness" async_ps its
// staleness bound (an older record's variant "τ=2" does too); rows with
// none (user strategies) get no prediction and say so.
//
// Thread-safety: stateless functions, safe to call concurrently.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_PREDICTION_REPORT_H_
#define RINGSIDE_EXPERIMENTS_REPORT_PREDICTION_REPORT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cost/cost_model.h"
#include "experiments/report/report.h"

namespace ringside {

struct PredictedRun {
  std::string strategy;
  std::string parallel_type;  // ParallelTypeLabel of the row
  int workers = 1;
  int prm_srv = 0;
  std::string modelled_as;  // "ring", "ring, M×0.5", ...; "" = not modelled
  double compute_s = 0;     // t_c, measured
  double measured_step_s = 0;
  // Every run's step when the row was run several times (compare
  // --repeats; measured_step_s is their median run's); empty: once.
  std::vector<double> measured_runs_s;
  double measured_utilization = 0;  // mean over the row's workers
  std::optional<Prediction> prediction;
  std::optional<double> error;  // (predicted − measured) / measured step
  std::string why_not;          // when there is no prediction
  // What makes the measurement not the steady state the model predicts
  // ("" = nothing known): async_ps with fewer warm-up steps than its
  // staleness bound τ measured steps that did not wait for a round.
  std::string caveat;
};

// One entry per row, in order. `link` supplies B, α, F, τ, the overlap and
// duplex settings; its compute/model/worker/server fields are ignored.
std::vector<PredictedRun> PredictRuns(const std::vector<ReportRow>& rows,
                                      const CostInputs& link);

// The strategy rows with an error (the baseline aside: its step is its
// compute), how many are within 20% of their measured step, and the others
// as "Ring n=2 -30%".
struct ErrorSummary {
  int modelled = 0;
  int within = 0;
  std::vector<std::string> outside;
};
ErrorSummary SummarizeErrors(const std::vector<PredictedRun>& runs);

// Markdown: a line naming the link and where it came from (`link_source`),
// then a table Parallel type | n | PrmSrv | Modelled as | Compute (ms) |
// Predicted step (ms) | Measured step (ms) | Error | Predicted util. |
// Measured util.; "-" where there is no prediction; the SummarizeErrors
// line ("Within 20% of the measured step: k of N ..."); the reasons for
// rows without a prediction, as a list.
std::string PredictionMarkdown(const std::vector<PredictedRun>& runs,
                               const CostInputs& link,
                               const std::string& link_source);

// {"link": {bandwidth_Bps, latency_s, fusion_threshold_bytes, cycle_s,
//  overlap, source}, "runs": [{strategy, workers, prm_srv, modelled_as,
//  compute_s, measured_step_s, measured_utilization, predicted_step_s,
//  predicted_utilization, comm_s, error, why_not, caveat}]} (nulls where
//  none).
nlohmann::json PredictionJson(const std::vector<PredictedRun>& runs,
                              const CostInputs& link,
                              const std::string& link_source);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_PREDICTION_REPORT_H_
