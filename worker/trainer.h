// Trainer: one worker's synchronous data-parallel training loop.
//
// Step t: take examples [t*N*b + r*b, t*N*b + (r+1)*b) of the dataset's
// seeded order (the equivalence oracle's slicing), forward/backward with
// the strategy's OnGradientReady as the readiness callback, then
// strategy.FinishStep(t). Then evaluate on the held-out set.
// Blocking; not thread-safe (run one Trainer per worker thread/process).
#ifndef RINGSIDE_WORKER_TRAINER_H_
#define RINGSIDE_WORKER_TRAINER_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "absl/status/statusor.h"
#include "common/launch_env.h"
#include "models/dataset.h"
#include "models/model.h"
#include "worker/run_metrics.h"
#include "worker/sync_strategy.h"

namespace ringside {

struct TrainerOptions {
  // Examples per worker per step (b); > 0.
  int64_t batch_size = 32;
  // Training steps; > 0.
  int64_t steps = 40;
  // Leading steps excluded from the measures; 0 <= warmup < steps.
  int64_t warmup_steps = 5;
  // Seed of the initial parameters (every rank uses the same).
  uint64_t init_seed = 1;

  absl::Status Validate() const;
};

struct TrainResult {
  std::vector<float> params;  // final parameters
  double eval_loss = 0;
  // {"event":"final", rank, strategy, world_size, eval_loss, utilization,
  //  throughput, compute_s, wall_s, bytes_sent, bytes_received, ...}
  nlohmann::json final_record;
};

using RecordFn = std::function<void(const nlohmann::json&)>;

// When the phases of one training step happened (steady-clock seconds).
struct StepTimes {
  double start = 0;          // before the batch was read
  double compute_start = 0;  // ForwardBackward called
  double backward_end = 0;   // ForwardBackward returned
  double finish_end = 0;     // FinishStep returned
};

// The end of one step, shared by Train and TrainOnCuda: the step's
// FORWARD_BACKWARD and FINISH_STEP spans on `timeline` (may be null); then
// FinishStep's error annotated with the strategy and step, or the step
// record (compute = `model_compute_s` + the strategy's local optimizer
// time) into `metrics` and `on_record` (may be empty).
absl::Status RecordStep(const SyncStrategy& strategy, int64_t step, double loss,
                        const StepTimes& times, double model_compute_s,
                        const absl::StatusOr<StepStats>& stats,
                        Timeline* timeline, RunMetrics& metrics,
                        const RecordFn& on_record);

// Runs Init, the steps and Shutdown of `strategy`; `on_record` (may be
// empty) receives each step record as it is measured.
absl::StatusOr<TrainResult> Train(Model& model, Dataset& dataset,
                                  SyncStrategy& strategy, const RankInfo& rank,
                                  const OptimizerConfig& optimizer,
                                  const SyncOptions& sync,
                                  const TrainerOptions& options,
                                  const RecordFn& on_record);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_TRAINER_H_
