#include "worker/strategies/allreduce/bucket_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int64_t, ring_bucket_kb,
          ringside::GradientBucketOptions().bucket_bytes / 1024,
          "Gradient bucket size (KiB) of ring, ring_fp16, hierarchical, "
          "zero1 and zero2, PyTorch DDP's default 25 MiB; each bucket of "
          "adjacent tensors is one in-place reduction. 0: one per tensor.");
ABSL_FLAG(int64_t, ring_first_bucket_kb,
          ringside::GradientBucketOptions().first_bucket_bytes / 1024,
          "Size of the first gradient bucket (KiB), small so that reduction "
          "starts early in backward (DDP: 1 MiB).");

namespace ringside {

absl::Status GradientBucketOptions::Validate() const {
  if (bucket_bytes < 0 || first_bucket_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ring bucket sizes must be >= 0, got ", first_bucket_bytes,
        " (first) and ", bucket_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<GradientBucketOptions> GradientBucketOptionsFromFlags() {
  GradientBucketOptions options;
  options.bucket_bytes = absl::GetFlag(FLAGS_ring_bucket_kb) * 1024;
  options.first_bucket_bytes = absl::GetFlag(FLAGS_ring_first_bucket_kb) * 1024;
  return ValidatedFromFlags(options, "--ring_bucket_kb/--ring_first_bucket_kb");
}

RINGSIDE_REGISTER_OPTION_FLAGS(GradientBucketOptions,
                               GradientBucketOptionsFromFlags);

}  // namespace ringside
