// Sharded checkpoints of the ZeRO strategies, loaded onto any number of
// ranks and any ShardPlan: each rank writes its own pieces
// (ShardCheckpointPath(dir, rank, N), core/checkpoint.h), and a rank that
// resumes copies the elements of its own pieces — parameters and every
// optimizer-state buffer — out of whichever files hold them, as PyTorch's
// distributed checkpoint reshards on load. A set written by N ranks with
// one plan resumes on M ranks with another, exactly.
// Thread-compatible (functions of the files and their arguments).
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_CHECKPOINT_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/key_range.h"
#include "core/optimizer_config.h"
#include "core/tensor_layout.h"

namespace ringside {

// A complete set of shard files: ShardCheckpointPath(dir, i, num_shards)
// for every i < num_shards, after `step` updates (file 0's).
struct ShardFileSet {
  int num_shards = 0;
  int64_t step = 0;
};

// The complete set in `dir` with the highest step (on a tie, the one of
// `preferred_shards` files, else the fewest), by file 0's header
// (ReadCheckpointStep; LoadShardPieces checks every file it reads whole).
// NOT_FOUND naming `dir` and what it holds when no set is complete; file
// 0's errors as ReadCheckpointStep's.
absl::StatusOr<ShardFileSet> FindNewestShardSet(const std::string& dir,
                                                int preferred_shards);

// Copies this rank's `pieces` (disjoint, in buffer order) out of `set`'s
// files in `dir`: into `params` (the layout's whole flat buffer) at their
// offsets, and into `state` (the optimizer's state buffers, each the
// pieces' elements concatenated). Reads file `first_file` first and stops
// as soon as every element is found (the same plan on the same ranks
// reads one file). FAILED_PRECONDITION when a file was written for another
// model, optimizer, step or number of state buffers, or when the files do
// not hold every element of the pieces exactly once (naming the first
// missing element); errors name the file.
absl::Status LoadShardPieces(const std::string& dir, const ShardFileSet& set,
                             const TensorLayout& layout,
                             const OptimizerConfig& optimizer,
                             absl::Span<const KeyRange> pieces, int first_file,
                             absl::Span<float> params,
                             const std::vector<absl::Span<float>>& state);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_CHECKPOINT_H_
