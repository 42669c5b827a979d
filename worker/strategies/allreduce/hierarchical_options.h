// HierarchicalOptions: how hierarchical and byteps group their ranks into
// hosts. Its flag (--local_size) is defined once, in hierarchical_options.cc,
// for the worker and predict (where it is the cluster's ranks per host).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct HierarchicalOptions {
  // Ranks per host: ranks [h*L, (h+1)*L) share host h. 0 = from the
  // launcher (LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE,
  // SLURM_NTASKS_PER_NODE), else every rank on one host. >= 0.
  int local_size = 0;

  absl::Status Validate() const;
};

// --local_size.
absl::StatusOr<HierarchicalOptions> HierarchicalOptionsFromFlags();

// Returns getenv(name) or nullptr.
using GetEnvFn = std::function<const char*(const char* name)>;

// Ranks per host for a job of `world_size` ranks: `flag_local_size` when >
// 0; otherwise the first launcher variable that is set, LOCAL_WORLD_SIZE
// (torchrun), OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI), SLURM_NTASKS_PER_NODE
// (SLURM); otherwise world_size (every rank on one host). INVALID_ARGUMENT,
// naming where the value came from, when it is negative, not an integer,
// larger than world_size or does not divide it (every host must hold the
// same number of ranks). Thread-safe if `get_env` is.
absl::StatusOr<int> ResolveLocalSize(int flag_local_size, int world_size,
                                     const GetEnvFn& get_env);

// Where `rank` of `world_size` sits among hosts of L ranks (L from
// options.local_size or the launcher's environment, ResolveLocalSize with
// getenv): host h holds ranks [h*L, (h+1)*L).
struct HostGrouping {
  int local_size = 1;  // L
  int num_hosts = 1;   // H = world_size / L
  int host = 0;
  int local_rank = 0;
};
absl::StatusOr<HostGrouping> GroupIntoHosts(const HierarchicalOptions& options,
                                            int rank, int world_size);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_
