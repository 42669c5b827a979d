#include "worker/strategies/sharded/zero_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(std::string, zero_layout, ringside::ZeroOptions().layout,
          "How zero2 and zero3 shard their buffers: per_unit (each bucket / "
          "tensor cut evenly across the ranks, as FSDP) or contiguous (the "
          "whole buffer in byte-balanced shards, as DeepSpeed stage 1/2).");

ABSL_FLAG(int64_t, zero3_unit_kb, ringside::ZeroOptions().zero3_unit_bytes >> 10,
          "zero3's units (FSDP's wrapped modules): adjacent tensors up to "
          "this many KiB are gathered and reduce-scattered together; 0: one "
          "tensor per unit.");

namespace ringside {

absl::Status ZeroOptions::Validate() const {
  if (layout != "per_unit" && layout != "contiguous") {
    return absl::InvalidArgumentError(absl::StrCat(
        "zero_layout must be per_unit or contiguous, got '", layout, "'"));
  }
  if (zero3_unit_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "zero3_unit_kb must be >= 0 (0: one tensor per unit), got ",
        zero3_unit_bytes / 1024));
  }
  return absl::OkStatus();
}

absl::StatusOr<ZeroOptions> ZeroOptionsFromFlags() {
  ZeroOptions options;
  options.layout = absl::GetFlag(FLAGS_zero_layout);
  options.zero3_unit_bytes = absl::GetFlag(FLAGS_zero3_unit_kb) << 10;
  return ValidatedFromFlags(options, "--zero_layout and --zero3_unit_kb");
}

RINGSIDE_REGISTER_OPTION_FLAGS(ZeroOptions, ZeroOptionsFromFlags);

}  // namespace ringside
