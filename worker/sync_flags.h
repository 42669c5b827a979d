// The worker's synchronization flags (the parameter servers, the
// transport, deadlines, checkpoints and each strategy's knobs: --chunk_kb,
// --overlap, --ring_bucket_kb, --ring_first_bucket_kb, --staleness,
// --local_size, the fusion runtime's, the security files) and the
// SyncOptions they make. Defined once here, for the worker and any binary
// that runs strategies in process.
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
