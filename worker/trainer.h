// Trainer: one worker's synchronous data-parallel training loop, the same
// for every compute backend (host or CUDA, worker/compute_backend.h).
//
// Step t: take examples [t*N*b + r*b, t*N*b + (r+1)*b) of the dataset's
// seeded order (the equivalence oracle's slicing), forward/backward on the
// backend with the strategy's OnGradientReady as the readiness callback,
// then strategy.FinishStep(t), then the step record. Then evaluate on the
// held-out set and build the final record.
//
// Gradient accumulation (accumulate_steps = k > 1; DDP's no_sync,
// Horovod's backward_passes_per_step): step t runs k passes, pass j on
// examples [((t*k + j)*N + r)*b, +b), so the N workers' k passes cover the
// global batch of N*b*k examples that one worker with batch N*b*k takes in
// step t. The backend stashes the first k - 1 passes' gradients
// (ComputeBackend::StashGradients); the strategy sees only the last pass,
// each gradient folded to the mean over the k passes as it becomes ready,
// and one FinishStep: it synchronizes once per k passes. The step's loss is
// the mean of the passes' losses, its compute time their sum.
// Blocking; not thread-safe (run one loop per worker thread/process).
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
#include "worker/compute_backend.h"
#include "worker/stragglers.h"
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
  // Forward/backward passes per step (k), each on `batch_size` examples,
  // before the one synchronization; >= 1.
  int64_t accumulate_steps = 1;
  // Evaluate on the held-out set after step t when (t + 1) % eval_every ==
  // 0 and after the last step, recording {"event":"eval", rank, step,
  // samples, train_wall_s, loss}; 0: only the final evaluation. >= 0. The
  // evaluations are left out of every time measure.
  int64_t eval_every = 0;

  absl::Status Validate() const;
};

using RecordFn = std::function<void(const nlohmann::json&)>;

// What one worker trains, apart from the model: the data, the strategy,
// who this worker is and how long and how it trains.
struct TrainJob {
  Dataset* dataset = nullptr;        // not owned; required
  SyncStrategy* strategy = nullptr;  // not owned; required
  RankInfo rank;
  OptimizerConfig optimizer;
  SyncOptions sync;
  TrainerOptions options;
  // Deliberately slow or uneven compute (worker/stragglers.h); none by
  // default.
  Stragglers stragglers;
  // Receives each step record as it is measured; may be empty.
  RecordFn on_record;

  // INVALID_ARGUMENT, naming the field: no dataset or strategy, or invalid
  // options or optimizer.
  absl::Status Validate() const;
};

struct TrainResult {
  std::vector<float> params;  // final parameters, in host memory
  double eval_loss = 0;
  // {"event":"final", rank, world_size, strategy, model, batch_size,
  //  accumulate_steps, lr (the rate after scaling), lr_warmup_steps, steps,
  //  start_step, warmup_steps, measured_steps, eval_loss, utilization,
  //  throughput, compute_s, wall_s, bytes_sent, bytes_received,
  //  ring_critical_bytes (sharded strategies), ring_bucket_bytes and
  //  ring_first_bucket_bytes (strategies that bucket), ps_chunk_bytes
  //  (parameter-server strategies; 0: AutoChunkBytes), staleness
  //  (strategies with a staleness bound), memory, emulated, device, timing,
  //  and the backend's own fields}
  nlohmann::json final_record;
};

// Runs Init, the steps and Shutdown of job.strategy (through the backend's
// Adapt) on `backend`; job.on_record receives each step record. Compute
// time per step = the backend's ComputeSeconds + the strategy's local
// optimizer time.
absl::StatusOr<TrainResult> RunTraining(ComputeBackend& backend,
                                        const TrainJob& job);

// RunTraining on the host (HostBackend): the model computes on the CPU,
// parameters and gradients in host memory.
absl::StatusOr<TrainResult> Train(Model& model, const TrainJob& job);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_TRAINER_H_
