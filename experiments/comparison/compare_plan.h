// Which strategies and worker counts a compare sweep runs, from
// --strategies and --workers: the baseline first, then each entry in the
// order given (all registered strategies in the registry's study order when
// none is given), an entry carrying its own worker flags as
// NAME@FLAG=VALUE[@...] (baseline@FLAG=VALUE: a further single-worker
// reference, e.g. at another emulated compute); the worker counts
// ascending and distinct. Pure functions of their arguments: no I/O, safe
// from any thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_PLAN_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/job/local_job.h"

namespace ringside::compare {

// The strategies to run, baseline first, out of `registered` (worker
// --list_strategies) as `strategies` (--strategies; "": those in the
// default sweep, ListedStrategy::default_sweep; "all": every one)
// chooses. An entry NAME@FLAG=VALUE passes --FLAG=VALUE to NAME's runs and
// names it in the row ("SPS [b=8]"; a flag the variant states, as the
// row's "(τ=8)" does, is left out of the name), so that two settings never
// share a row name. FLAG is an option NAME reads or one of the training
// flags batch_size, accumulate_steps, optimizer, lr, momentum,
// lr_warmup_steps, lr_scaling, emulated_compute_ms and precision.
// NOT_FOUND when no baseline is registered; INVALID_ARGUMENT for an unknown
// NAME or a FLAG NAME does not read.
absl::StatusOr<std::vector<ListedStrategy>> Plan(
    const std::vector<ListedStrategy>& registered,
    const std::string& strategies);

// The GPUs a run of `strategy` with `workers` CUDA workers needs on one
// host: one per worker for a strategy on device buffers (NCCL: a distinct
// GPU per rank, ListedStrategy::gpu_per_rank) or, with `gpu_per_worker`
// (compare's --gpu_per_worker: every worker its own GPU, as in a node of
// `workers` GPUs), for every strategy; else 1 (the parameter-server
// strategies' workers may share one).
int GpusNeeded(const ListedStrategy& strategy, int workers,
               bool gpu_per_worker);

// --workers as ascending distinct counts >= 1; INVALID_ARGUMENT for an
// entry that is not such a count or an empty list.
absl::StatusOr<std::vector<int>> WorkerCounts(
    const std::vector<std::string>& workers);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_PLAN_H_
