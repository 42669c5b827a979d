// FusionOptions: the knobs of the fusion runtime (fusion_runtime.h), in a
// header of their own so the worker's SyncOptions can carry them without
// depending on the runtime.
#ifndef RINGSIDE_COLLECTIVES_FUSION_FUSION_OPTIONS_H_
#define RINGSIDE_COLLECTIVES_FUSION_FUSION_OPTIONS_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collectives/fusion/stall_report.h"
#include "common/timeline.h"

namespace ringside {

struct FusionOptions {
  // Period of the background cycle (negotiate + reduce).
  absl::Duration cycle_time = absl::Milliseconds(1);
  // Fusion buffer size in bytes; 0 turns fusion off (one all-reduce per
  // tensor). Must be >= 0 and a multiple of 4.
  int64_t fusion_threshold_bytes = int64_t{64} << 20;
  // Reduce a batch whose tensors are contiguous in the gradient buffer in
  // place instead of copying through the fusion buffer.
  bool in_place_contiguous = true;
  // Reduce the batches of one cycle two at a time on two data collectives
  // (the runtime's `overlap_data` lane; the fusion strategy connects it on
  // CPU workers). False: one lane, batches one after another.
  bool overlap_batches = true;
  // Response-cache entries (tensors); 0 disables the cache.
  int cache_capacity = 1024;
  // Report a tensor some ranks submitted and others not after this long.
  absl::Duration stall_warning = absl::Seconds(60);
  // Deadline of every collective call (control and data).
  absl::Duration timeout = absl::Seconds(120);
  // Per-tensor NEGOTIATE, QUEUE, MEMCPY_IN_FUSION_BUFFER, ALLREDUCE,
  // MEMCPY_OUT spans (not owned; may be null).
  Timeline* timeline = nullptr;
  // Called on rank 0's background thread per stall; default LOG(WARNING).
  std::function<void(const StallReport&)> on_stall;

  absl::Status Validate() const;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_FUSION_OPTIONS_H_
