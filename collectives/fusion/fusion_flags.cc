#include "collectives/fusion/fusion_flags.h"

#include <cstdint>

#include "absl/flags/flag.h"
#include "absl/time/time.h"

ABSL_FLAG(double, cycle_time_ms, 1.0,
          "Fusion: period of the background negotiate-and-reduce cycle (ms).");
ABSL_FLAG(int64_t, fusion_threshold_bytes, int64_t{64} << 20,
          "Fusion: fusion buffer size in bytes; 0 turns fusion off (one "
          "all-reduce per tensor).");
ABSL_FLAG(bool, fusion_in_place, true,
          "Fusion: reduce batches that are contiguous in the gradient buffer "
          "in place instead of copying them through the fusion buffer.");
ABSL_FLAG(bool, fusion_overlap_batches, true,
          "Fusion (CPU): reduce a cycle's fused batches two at a time over "
          "two Gloo groups instead of one after another.");
ABSL_FLAG(int, response_cache_capacity, 1024,
          "Fusion: response-cache entries (tensors); 0 disables the cache.");
ABSL_FLAG(double, stall_warning_s, 60,
          "Fusion: warn (on rank 0) about a tensor some ranks submitted and "
          "others not after this long, naming the missing ranks (s).");

namespace ringside {

absl::StatusOr<FusionOptions> FusionOptionsFromFlags() {
  FusionOptions f;
  f.cycle_time = absl::Microseconds(1000 * absl::GetFlag(FLAGS_cycle_time_ms));
  f.fusion_threshold_bytes = absl::GetFlag(FLAGS_fusion_threshold_bytes);
  f.in_place_contiguous = absl::GetFlag(FLAGS_fusion_in_place);
  f.overlap_batches = absl::GetFlag(FLAGS_fusion_overlap_batches);
  f.cache_capacity = absl::GetFlag(FLAGS_response_cache_capacity);
  f.stall_warning = absl::Seconds(absl::GetFlag(FLAGS_stall_warning_s));
  if (absl::Status v = f.Validate(); !v.ok()) return v;
  return f;
}

}  // namespace ringside
