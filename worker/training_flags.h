// The training-dynamics flags, defined once for the worker and the
// launchers (launch, compare): --accumulate_steps, --lr_scaling,
// --lr_reference_batch, --lr_warmup_steps and the stragglers' --slow_ranks
// and --compute_jitter. The launchers check them before any process starts
// and pass them on (WorkerArgs); the worker reads them itself (the
// parameter servers receive the scaled rate and the warm-up in the
// optimizer config).
#ifndef RINGSIDE_WORKER_TRAINING_FLAGS_H_
#define RINGSIDE_WORKER_TRAINING_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/lr_scaling.h"
#include "worker/stragglers.h"

namespace ringside {

struct TrainingFlags {
  int64_t accumulate_steps = 1;
  LrScaling lr_scaling = LrScaling::kNone;
  int64_t lr_reference_batch = 0;  // 0: the per-worker batch
  int64_t lr_warmup_steps = 0;
  // Stragglers: --slow_ranks as given (passed on as is), and both flags
  // parsed (worker/stragglers.h), seed 1: a worker sets its --seed.
  std::string slow_ranks;
  Stragglers stragglers;

  // The worker flags that say so (none for the defaults).
  std::vector<std::string> WorkerArgs() const;
  // "" for the defaults, else e.g. "2 passes per step (gradient
  // accumulation); lr scaled linear from batch 32; 5 warm-up updates".
  std::string Describe() const;
};

// The flags, or INVALID_ARGUMENT naming the one at fault: --accumulate_steps
// < 1, an unknown --lr_scaling, --lr_reference_batch or --lr_warmup_steps
// < 0, a --slow_ranks entry that is not RANK:FACTOR with FACTOR > 0 and
// RANK in [0, max_workers) (max_workers 0: unchecked), --compute_jitter
// outside [0, 1).
absl::StatusOr<TrainingFlags> TrainingFlagsFromFlags(int max_workers = 0);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_TRAINING_FLAGS_H_
