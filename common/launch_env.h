// Rank and world size of this process, from flags or from the environment
// that torchrun (RANK, WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK/SIZE) or
// SLURM (SLURM_PROCID, SLURM_NTASKS) sets. Thread-safe (reads only).
#ifndef RINGSIDE_COMMON_LAUNCH_ENV_H_
#define RINGSIDE_COMMON_LAUNCH_ENV_H_

#include <string>

#include "absl/status/statusor.h"

namespace ringside {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  std::string source;  // "flags", "torchrun", "openmpi" or "slurm"
};

// Explicit values (>= 0 for rank, > 0 for world size) win; a value left at
// -1 is taken from the first launcher environment that sets it. Fails with
// INVALID_ARGUMENT when nothing sets them, a variable is not an integer,
// world_size < 1 or rank is outside [0, world_size).
absl::StatusOr<RankInfo> ResolveRank(int flag_rank, int flag_world_size);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_LAUNCH_ENV_H_
