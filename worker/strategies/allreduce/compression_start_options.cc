#include "worker/strategies/allreduce/compression_start_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int64_t, compression_start_step,
          ringside::CompressionStartOptions().start_step,
          "ring_topk, ring_sign, ring_onebit_adam: steps averaged with a "
          "plain all-reduce before compression starts (Deep Gradient "
          "Compression's warm-up; 1-bit Adam's freeze_step, which "
          "ring_onebit_adam needs >= 1); 0: compress from the first step.");

namespace ringside {

absl::Status CompressionStartOptions::Validate() const {
  if (start_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--compression_start_step must be >= 0, got ", start_step));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompressionStartOptions> CompressionStartOptionsFromFlags() {
  CompressionStartOptions options;
  options.start_step = absl::GetFlag(FLAGS_compression_start_step);
  return ValidatedFromFlags(options, "ring_topk, ring_sign, ring_onebit_adam");
}

RINGSIDE_REGISTER_OPTION_FLAGS(CompressionStartOptions,
                               CompressionStartOptionsFromFlags);

}  // namespace ringside
