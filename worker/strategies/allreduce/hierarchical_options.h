// HierarchicalOptions: how hierarchical groups its ranks into hosts. Its
// flag (--local_size) is defined once, in hierarchical_options.cc, for the
// worker and predict (where it is the cluster's ranks per host).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_

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

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_OPTIONS_H_
