#include "common/launch_env.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

struct EnvScheme {
  const char* source;
  const char* rank_var;
  const char* size_var;
};

constexpr EnvScheme kSchemes[] = {
    {"torchrun", "RANK", "WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS"},
};

absl::StatusOr<int> ReadIntVar(const char* name) {
  const char* value = std::getenv(name);
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "environment variable ", name, "='", value, "' is not an integer"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<RankInfo> ResolveRank(int flag_rank, int flag_world_size) {
  RankInfo info;
  info.rank = flag_rank;
  info.world_size = flag_world_size;
  info.source = "flags";
  for (const EnvScheme& scheme : kSchemes) {
    if (info.rank >= 0 && info.world_size > 0) break;
    if (std::getenv(scheme.rank_var) == nullptr ||
        std::getenv(scheme.size_var) == nullptr) {
      continue;
    }
    if (info.rank < 0) {
      absl::StatusOr<int> r = ReadIntVar(scheme.rank_var);
      if (!r.ok()) return r.status();
      info.rank = *r;
    }
    if (info.world_size <= 0) {
      absl::StatusOr<int> w = ReadIntVar(scheme.size_var);
      if (!w.ok()) return w.status();
      info.world_size = *w;
    }
    info.source = scheme.source;
  }
  if (info.world_size <= 0 && info.rank < 0) {
    // Nothing set anywhere: a single worker.
    info.rank = 0;
    info.world_size = 1;
  }
  if (info.world_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("world size must be >= 1, got ", info.world_size, " (",
                     info.source, ")"));
  }
  if (info.rank < 0) info.rank = 0;
  if (info.rank >= info.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", info.rank, " is outside [0, ", info.world_size,
                     ") (", info.source, ")"));
  }
  return info;
}

}  // namespace ringside
