// The fusion runtime's flags, defined once for every binary that runs or
// models it (worker, fusion_bench, predict): --cycle_time_ms,
// --fusion_threshold_bytes, --fusion_in_place, --fusion_overlap_batches,
// --response_cache_capacity, --stall_warning_s. Linking this library
// defines them.
#ifndef RINGSIDE_COLLECTIVES_FUSION_FUSION_FLAGS_H_
#define RINGSIDE_COLLECTIVES_FUSION_FUSION_FLAGS_H_

#include "absl/status/statusor.h"
#include "collectives/fusion/fusion_options.h"

namespace ringside {

// FusionOptions from the flags, validated (FusionOptions::Validate).
absl::StatusOr<FusionOptions> FusionOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_FUSION_FLAGS_H_
