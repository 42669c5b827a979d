#include "worker/strategies/ps/async_ps_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int, staleness, ringside::AsyncPsOptions().staleness,
          "async_ps: bounded staleness tau; a worker at step t may compute "
          "with parameters of version >= t - tau (0: as sps).");

namespace ringside {

absl::Status AsyncPsOptions::Validate() const {
  if (staleness < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("staleness must be >= 0, got ", staleness));
  }
  return absl::OkStatus();
}

absl::StatusOr<AsyncPsOptions> AsyncPsOptionsFromFlags() {
  AsyncPsOptions options;
  options.staleness = absl::GetFlag(FLAGS_staleness);
  return ValidatedFromFlags(options, "--staleness");
}

RINGSIDE_REGISTER_OPTION_FLAGS(AsyncPsOptions, AsyncPsOptionsFromFlags);

}  // namespace ringside
