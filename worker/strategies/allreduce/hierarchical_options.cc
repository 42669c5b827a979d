#include "worker/strategies/allreduce/hierarchical_options.h"

#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int, local_size, ringside::HierarchicalOptions().local_size,
          "Ranks per host (ranks [h*L, (h+1)*L) share host h), for "
          "hierarchical and byteps; 0 reads LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE "
          "or SLURM_NTASKS_PER_NODE, else all ranks on one host.");

namespace ringside {

absl::Status HierarchicalOptions::Validate() const {
  if (local_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "local_size must be >= 0 (0: from the launcher), got ", local_size));
  }
  return absl::OkStatus();
}

absl::StatusOr<HierarchicalOptions> HierarchicalOptionsFromFlags() {
  HierarchicalOptions options;
  options.local_size = absl::GetFlag(FLAGS_local_size);
  return ValidatedFromFlags(options, "--local_size");
}

absl::StatusOr<int> ResolveLocalSize(int flag_local_size, int world_size,
                                     const GetEnvFn& get_env) {
  int local_size = world_size;
  std::string source = "the default (every rank on one host)";
  if (flag_local_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local_size must be >= 0 (0: from the launcher), got ",
                     flag_local_size));
  }
  if (flag_local_size > 0) {
    local_size = flag_local_size;
    source = "--local_size";
  } else {
    for (const char* name : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                             "SLURM_NTASKS_PER_NODE"}) {
      const char* value = get_env ? get_env(name) : nullptr;
      if (value == nullptr || *value == '\0') continue;
      if (!absl::SimpleAtoi(value, &local_size) || local_size < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, "='", value, "' is not a positive integer (ranks per host)"));
      }
      source = name;
      break;
    }
  }
  if (local_size > world_size || world_size % local_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, " gives ", local_size,
        " ranks per host, which does not divide world_size=", world_size,
        " (every host must hold the same number of ranks; ranks "
        "[h*L, (h+1)*L) share host h)"));
  }
  return local_size;
}

absl::StatusOr<HostGrouping> GroupIntoHosts(const HierarchicalOptions& options,
                                            int rank, int world_size) {
  absl::StatusOr<int> local_size = ResolveLocalSize(
      options.local_size, world_size,
      [](const char* name) -> const char* { return std::getenv(name); });
  if (!local_size.ok()) return local_size.status();
  HostGrouping g;
  g.local_size = *local_size;
  g.num_hosts = world_size / g.local_size;
  g.host = rank / g.local_size;
  g.local_rank = rank % g.local_size;
  return g;
}

RINGSIDE_REGISTER_OPTION_FLAGS(HierarchicalOptions,
                               HierarchicalOptionsFromFlags);

}  // namespace ringside
