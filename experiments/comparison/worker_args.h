// The worker flags compare passes to every run, and the lookup of one of
// them. A run's workers get, in this order (a later flag wins): compare's
// own workload flags, the training-dynamics flags, --worker_args, then the
// flags after --. Pure functions of their arguments: safe from any thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_WORKER_ARGS_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_WORKER_ARGS_H_

#include <optional>
#include <string>
#include <vector>

#include "experiments/comparison/compare_options.h"
#include "worker/training_flags.h"

namespace ringside::compare {

// The user's own worker flags: `workload.worker_args` split at spaces, then
// `extra` (the flags after --).
std::vector<std::string> ExtraWorkerArgs(const WorkloadOptions& workload,
                                         const std::vector<std::string>& extra);

// Every worker flag compare passes on: --model, --batch_size, --steps,
// --warmup_steps, --eval_every and --failure_timeout_s (with --profile and
// --emulated_compute_ms for the synthetic model, --device unless cpu), then
// `training`'s, then ExtraWorkerArgs.
std::vector<std::string> WorkerArgs(const WorkloadOptions& workload,
                                    const TrainingFlags& training,
                                    const std::vector<std::string>& extra);

// The value of worker flag --`name` in `worker_args` (the last one wins),
// if given.
std::optional<std::string> WorkerFlag(
    const std::vector<std::string>& worker_args, const char* name);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_WORKER_ARGS_H_
