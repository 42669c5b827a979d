#include "worker/strategies/allreduce/topk_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(double, topk_ratio, ringside::TopkOptions().ratio,
          "ring_topk: the share of each tensor's gradient elements sent per "
          "step (the largest in magnitude, after error feedback); 1: all.");

namespace ringside {

absl::Status TopkOptions::Validate() const {
  if (!(ratio > 0 && ratio <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--topk_ratio must be in (0, 1], got ", ratio));
  }
  return absl::OkStatus();
}

absl::StatusOr<TopkOptions> TopkOptionsFromFlags() {
  TopkOptions options;
  options.ratio = absl::GetFlag(FLAGS_topk_ratio);
  return ValidatedFromFlags(options, "ring_topk");
}

RINGSIDE_REGISTER_OPTION_FLAGS(TopkOptions, TopkOptionsFromFlags);

}  // namespace ringside
