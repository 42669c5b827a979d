#include "collectives/fusion/fusion_options.h"

#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status FusionOptions::Validate() const {
  if (cycle_time <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fusion cycle_time must be > 0, got ", absl::FormatDuration(cycle_time)));
  }
  if (fusion_threshold_bytes < 0 || fusion_threshold_bytes % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion_threshold_bytes must be >= 0 and a multiple of "
                     "4, got ", fusion_threshold_bytes));
  }
  if (cache_capacity < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fusion cache_capacity must be >= 0, got ", cache_capacity));
  }
  if (stall_warning <= absl::ZeroDuration() || timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "fusion stall_warning and timeout must be > 0");
  }
  return absl::OkStatus();
}

}  // namespace ringside
