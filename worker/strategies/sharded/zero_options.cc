#include "worker/strategies/sharded/zero_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(std::string, zero_layout, ringside::ZeroOptions().layout,
          "How zero2 and zero3 shard their buffers: per_unit (each bucket / "
          "tensor cut evenly across the ranks, as FSDP) or contiguous (the "
          "whole buffer in byte-balanced shards, as DeepSpeed stage 1/2).");

namespace ringside {

absl::Status ZeroOptions::Validate() const {
  if (layout != "per_unit" && layout != "contiguous") {
    return absl::InvalidArgumentError(absl::StrCat(
        "zero_layout must be per_unit or contiguous, got '", layout, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ZeroOptions> ZeroOptionsFromFlags() {
  ZeroOptions options;
  options.layout = absl::GetFlag(FLAGS_zero_layout);
  return ValidatedFromFlags(options, "--zero_layout");
}

RINGSIDE_REGISTER_OPTION_FLAGS(ZeroOptions, ZeroOptionsFromFlags);

}  // namespace ringside
