// ZeroOptions: how zero2 and zero3 cut their flat buffers among the ranks
// (tensor_shards.h), and zero3's units. Its flags (--zero_layout,
// --zero3_unit_kb) are defined once, in zero_options.cc.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct ZeroOptions {
  // "per_unit": every unit (zero2's buckets, zero3's tensors) cut evenly
  // across the ranks, as FSDP does; "contiguous": the whole buffer cut
  // into byte-balanced shards, as DeepSpeed's stage 1/2 does.
  std::string layout = "per_unit";
  // zero3's units (FSDP's wrapped modules): adjacent tensors up to this
  // many bytes (a larger tensor is a unit of its own); 0: one tensor per
  // unit. >= 0.
  int64_t zero3_unit_bytes = int64_t{4} << 20;

  absl::Status Validate() const;
  bool per_unit() const { return layout == "per_unit"; }
};

// --zero_layout, --zero3_unit_kb.
absl::StatusOr<ZeroOptions> ZeroOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO_OPTIONS_H_
