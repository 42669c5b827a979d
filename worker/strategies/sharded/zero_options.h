// ZeroOptions: how zero2 and zero3 cut their flat buffers among the ranks
// (tensor_shards.h). Its flag (--zero_layout) is defined once, in
// zero_options.cc.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct ZeroOptions {
  // "per_unit": every unit (zero2's buckets, zero3's tensors) cut evenly
  // across the ranks, as FSDP does; "contiguous": the whole buffer cut
  // into byte-balanced shards, as DeepSpeed's stage 1/2 does.
  std::string layout = "per_unit";

  absl::Status Validate() const;
  bool per_unit() const { return layout == "per_unit"; }
};

// --zero_layout.
absl::StatusOr<ZeroOptions> ZeroOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_
