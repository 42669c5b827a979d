// The cost model's inputs for a compare sweep: the link it predicts with
// (B and α from the flags, the shaped link or a loopback measurement; the
// fusion, bucket and chunk sizes the workers will use) and the CPU costs
// calibrated on this machine after the baseline's run. Blocking
// (measurements and benchmarks run here); no state of its own, call from
// one thread at a time since the measurements share the machine.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_COST_MODEL_LINK_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_COST_MODEL_LINK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/calibration/calibration.h"
#include "experiments/cost/cost_model.h"
#include "experiments/job/netns_topology.h"
#include "experiments/report/report.h"

namespace ringside::compare {

// Link, overlap and fusion settings of the cost model: B and α per
// link_estimate.h; F and τ as the workers will use them (their
// --fusion_threshold_bytes / --cycle_time_ms, else the defaults).
struct CostModelLink {
  CostInputs inputs;   // B, α, o, F, τ
  std::string source;  // where B and α came from
};

// The link for runs on `network` whose workers get `worker_args`: B and α
// from `options` when given, else the shaped link's, else measured on
// loopback (up to 30 s); o from `options`; F, τ, ring's buckets and the
// parameter servers' chunk from the worker flags, else the defaults.
// INVALID_ARGUMENT for a worker flag that is not a number or inputs the
// cost model refuses; the measurement's error when it fails.
absl::StatusOr<CostModelLink> MakeCostModelLink(
    const NetworkShape& network, const std::vector<std::string>& worker_args,
    const CostModelOptions& options);

// The CPU costs the α-β terms lack, measured for the sweep's model
// (experiments/calibration/calibration.h), or why there are none.
struct SweepCalibration {
  std::optional<Calibration> costs;
  std::string why_none = "not measured";  // when !costs
};

// The cost model's inputs for the run's predictions: the link, with the
// calibrated CPU costs when there are some.
CostInputs PredictionInputs(const CostModelLink& link,
                            const std::optional<Calibration>& calibration);

// The calibration's line for the report.
std::string CalibrationNote(const SweepCalibration& calibration);

// What the calibration after the baseline's run needs besides the run.
struct CalibrationRequest {
  bool enabled = true;  // --calibrate
  int cores = 0;        // the machine's (CalibrationOptions::cores)
  int servers = 0;      // --servers; the benchmarks use at least 1
  // A calibration an earlier link of this invocation measured (on
  // loopback, for the same model, so the same for every link): reused.
  std::optional<Calibration> earlier;
};

// The calibration after the baseline's training run `baseline` (its M and
// T, and its compute as the wait before each call), unless the request is
// disabled, the run lacks the model's size or ran off the CPU, or an
// earlier one is reused. A failure is said on stderr and in `why_none`:
// the predictions then go without.
SweepCalibration CalibrateAfterBaseline(const CalibrationRequest& request,
                                        const ReportRow& baseline);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_COST_MODEL_LINK_H_
