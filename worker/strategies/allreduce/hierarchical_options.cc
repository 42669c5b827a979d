#include "worker/strategies/allreduce/hierarchical_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int, local_size, ringside::HierarchicalOptions().local_size,
          "Ranks per host (ranks [h*L, (h+1)*L) share host h), for "
          "hierarchical; 0 reads LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE "
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

RINGSIDE_REGISTER_OPTION_FLAGS(HierarchicalOptions,
                               HierarchicalOptionsFromFlags);

}  // namespace ringside
