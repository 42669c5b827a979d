// The worker's synchronization flags shared by the strategies (the
// parameter servers, the transport, deadlines, checkpoints, --overlap, the
// security files) and the SyncOptions they make, with each linked
// strategy's own options read from the flags its options library defines
// (strategy_option_set.h: --chunk_kb, --ring_bucket_kb, --staleness,
// --local_size, the fusion runtime's, ...). Defined once, for the worker
// and any binary that runs strategies in process.
#ifndef RINGSIDE_WORKER_SYNC_FLAGS_H_
#define RINGSIDE_WORKER_SYNC_FLAGS_H_

#include "absl/status/statusor.h"
#include "worker/sync_strategy.h"

namespace ringside {

// SyncOptions from the flags, validated (SyncOptions::Validate);
// INVALID_ARGUMENT naming the flag at fault. The store and the timeline are
// left unset (the worker sets them).
absl::StatusOr<SyncOptions> SyncOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_SYNC_FLAGS_H_
