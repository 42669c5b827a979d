// A rank's own checkpoint, beside the job's: what differs from rank to
// rank (ring's compression hooks' error feedback; local_sgd's and diloco's
// parameters and optimizer state between averages), in this rank's
// RankStateCheckpointPath (core/checkpoint.h), with the rank's parameters
// (the whole buffer) and the strategy's own floats as the file's state.
// A job resumes it only with the number of workers that wrote it.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RANK_STATE_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RANK_STATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checkpoint.h"
#include "worker/sync_strategy.h"

namespace ringside {

// Writes this rank's file after `step` (atomically, checksummed): the
// parameters and `state`, its writer "<strategy> <what>, rank r of n".
absl::Status WriteRankState(const SyncContext& context, int64_t step,
                            const std::string& strategy,
                            const std::string& what, std::vector<float> state);

// This rank's file, checked against the job's model and optimizer;
// NOT_FOUND naming the file, `strategy` and `what` when it does not exist.
absl::StatusOr<Checkpoint> ReadRankState(const SyncContext& context,
                                         const std::string& strategy,
                                         const std::string& what);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RANK_STATE_H_
