// GradientBucketOptions: the gradient buckets of the strategies that reduce
// in buckets during backward (ring, ring_fp16, hierarchical, zero1, zero2;
// PyTorch DDP's scheme and defaults, gradient_buckets.h). Its flags
// (--ring_bucket_kb, --ring_first_bucket_kb) are defined once, in
// bucket_options.cc, for the worker, predict and the benchmarks.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct GradientBucketOptions {
  // The first bucket closes at first_bucket_bytes, the others at
  // bucket_bytes; each bucket is reduced as soon as its last tensor is
  // ready. bucket_bytes == 0: one reduction per tensor. Both >= 0.
  int64_t bucket_bytes = int64_t{25} << 20;
  int64_t first_bucket_bytes = int64_t{1} << 20;

  absl::Status Validate() const;
};

// --ring_bucket_kb and --ring_first_bucket_kb.
absl::StatusOr<GradientBucketOptions> GradientBucketOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_OPTIONS_H_
