// Prediction report: the cost model (cost_model.h) beside measured runs.
// Every row is predicted from what a user has before the run, never from
// the row's own measurements: t_c = the compute per step of the sweep's
// single-worker reference run (the baseline for ringside's rows; PyTorch
// DDP at n = 1 for DDP's rows), M and T = the model's gradient bytes and
// tensors, n = the row's workers, K = its servers; the link (B, α), fusion
// threshold F and cycle τ come from the caller (compare measures the link
// or takes the shaped one). The error is (predicted − measured) / measured
// step time; positive = the model over-predicts.
//
// Beside it, labelled "explained", the same formula from the row's own
// measured compute (its slowest rank's): how much of the step the model
// accounts for once the compute's own slowdown in that run is known.
//
// Rows not counted in the summary (PredictedRun::not_counted): the
// reference run itself; rows the model gives nothing beyond the
// reference's compute (n = 1 without communication), whose prediction
// would only restate the reference; rows outside the model's domain, which
// prices each worker's compute as alone on its device: real compute whose
// workers' compute threads and servers outnumber the cores; real compute
// at n > 1 whose compute threads and servers fill the cores while its
// communication runs during the compute (Prediction::
// communicates_during_compute: the transport's threads then take cores
// and cache from the compute); and core-bound rows, whose predicted CPU
// demand keeps kCoreBoundShare of the cores busy or more (contending
// processes run short of the perfectly packed cores' bound the model
// prices; validate_predictions.py keeps them apart too). Their errors stay
// in the table, marked.
//
// A row's prediction is its measured window's mean step: where the
// strategy takes plain first steps (PowerSGD's --powersgd_start_step) and
// the window holds some, they are priced by their own formula and
// weighed in (cost_model.h: PredictMeasuredWindow), and said so below the
// table.
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
  // t_c of the prediction: the reference run's compute per step, and which
  // run that was ("Baseline n=1"; "" = none found).
  double compute_s = 0;
  std::string reference;
  double own_compute_s = 0;  // the row's own measured compute (explained)
  double measured_step_s = 0;
  // Every run's step when the row was run several times (compare
  // --repeats; measured_step_s is their median run's); empty: once.
  std::vector<double> measured_runs_s;
  double measured_utilization = 0;  // mean over the row's workers
  std::optional<Prediction> prediction;  // from the reference's compute
  std::optional<double> error;  // (predicted − measured) / measured step
  std::string why_not;          // when there is no prediction
  // The same formula from the row's own compute, and its error.
  std::optional<Prediction> explained;
  std::optional<double> explained_error;
  // Why the row's error is left out of the summary ("" = counted).
  std::string not_counted;
  // What makes the measurement not the steady state the model predicts
  // ("" = nothing known): async_ps with fewer warm-up steps than its
  // staleness bound τ measured steps that did not wait for a round.
  std::string caveat;
  // The plain first steps its measured window held (PowerSGD's before it
  // compresses), which the prediction weighs in (cost_model.h's
  // PredictMeasuredWindow); steps 0: none.
  PlainStepsInWindow plain_steps;
  // What its updates are against one worker's (cost_model.h's
  // UpdatesLabel: "exact", "lossy (fp16 gradients)", "stale (τ=2)").
  std::string updates = "exact";
};

// A row's updates against one worker's (its cost-model strategy, else its
// name, and its staleness bound): UpdatesLabel's text.
std::string RowUpdatesLabel(const ReportRow& row);

// One entry per row, in order. `link` supplies B, α, F, τ, the overlap and
// duplex settings; its compute/model/worker/server fields are ignored.
// `cores`: the machine's cores the rows ran on (0: unknown, no row is
// outside the domain for it).
std::vector<PredictedRun> PredictRuns(const std::vector<ReportRow>& rows,
                                      const CostInputs& link, int cores = 0);

// The counted rows with an error (PredictedRun::not_counted empty), how
// many are within 20% of their measured step, and the others as
// "Ring n=2 -30%"; with `explained`, the same over the explained errors of
// the rows that are not the reference itself nor restate it.
struct ErrorSummary {
  int modelled = 0;
  int within = 0;
  std::vector<std::string> outside;
};
ErrorSummary SummarizeErrors(const std::vector<PredictedRun>& runs,
                             bool explained = false);

// Markdown: a line naming the link and where it came from (`link_source`),
// then a table Parallel type | n | PrmSrv | Modelled as | Compute,
// reference (ms) | Predicted step (ms) | Measured step (ms) | Error |
// Own compute (ms) | Explained step (ms) | Explained error | Predicted
// util. | Measured util.; "-" where there is none; the SummarizeErrors
// lines (predicted, then explained); the rows not counted and the reasons
// for rows without a prediction, as a list.
std::string PredictionMarkdown(const std::vector<PredictedRun>& runs,
                               const CostInputs& link,
                               const std::string& link_source);

// {"link": {bandwidth_Bps, latency_s, fusion_threshold_bytes, cycle_s,
//  overlap, source}, "runs": [{strategy, workers, prm_srv, modelled_as,
//  compute_s, compute_reference, own_compute_s, measured_step_s,
//  measured_utilization, predicted_step_s, predicted_utilization, comm_s,
//  error, explained_step_s, explained_error, counted, not_counted, why_not,
//  caveat, plain_steps_in_window: {steps, option, formula, plain_step_s,
//  own_step_s}}]} (nulls where none).
nlohmann::json PredictionJson(const std::vector<PredictedRun>& runs,
                              const CostInputs& link,
                              const std::string& link_source);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_PREDICTION_REPORT_H_
