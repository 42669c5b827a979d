// Checkpoints: the state a job needs to continue exactly where it stopped —
// parameters, optimizer state and step — for one parameter-server shard
// (written by ps_server), for the whole model (written by rank 0 of the
// all-reduce strategies) or for one ZeRO rank's pieces of it.
//
// File format 2 (one file per writer, replaced atomically):
//   "RSCKPT2\n"                   8-byte magic: the format version
//   uint64 little-endian          header length H
//   H bytes                       proto::CheckpointHeader
//   num_params float32            parameters of the pieces, concatenated
//   num_state float32             optimizer state (Optimizer::StateBuffers,
//                                 each the pieces' elements, concatenated)
//   uint32 little-endian          CRC-32 (zlib) of everything above
// Format 1 ("RSCKPT1\n") held one key range in the header's range fields;
// it is read as format 2 with that range as the one piece (converted, not
// refused). Another version is refused, naming it.
// WriteCheckpointFile writes "<path>.tmp", fsyncs it and renames it over
// <path>, so a reader sees the old or the new checkpoint, never a torn one.
// ParseCheckpoint refuses anything that is not exactly such a file
// (DATA_LOSS: bad magic, truncation, checksum mismatch, trailing bytes;
// INVALID_ARGUMENT: sizes that disagree with the header), never returning a
// half-read state. Thread-compatible (pure functions).
#ifndef RINGSIDE_CORE_CHECKPOINT_H_
#define RINGSIDE_CORE_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/key_range.h"
#include "core/optimizer_config.h"
#include "core/tensor_layout.h"

namespace ringside {

struct Checkpoint {
  int64_t step = 0;  // parameters after `step` optimizer updates
  int shard = 0;
  int num_shards = 1;
  // Elements of the flat buffer held: disjoint, non-empty, in buffer order;
  // `params` is their concatenation.
  std::vector<KeyRange> pieces;
  TensorLayout layout;
  OptimizerConfig optimizer;
  std::string writer;
  std::vector<float> params;           // the pieces' length in floats
  std::vector<float> optimizer_state;  // Optimizer::StateBuffers, in order
};

std::string SerializeCheckpoint(const Checkpoint& checkpoint);
absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view bytes);

absl::Status WriteCheckpointFile(const std::string& path,
                                 const Checkpoint& checkpoint);
// NOT_FOUND when the file does not exist; otherwise ParseCheckpoint's
// errors, prefixed with the path.
absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path);
// The step of the checkpoint at `path`, from its header alone (the payload
// and its checksum are not read, so the step is only a hint until
// ReadCheckpointFile has checked the whole file). NOT_FOUND when the file
// does not exist; DATA_LOSS when its magic or header does not parse.
absl::StatusOr<int64_t> ReadCheckpointStep(const std::string& path);

// Checks that `checkpoint` was written for this job's model and optimizer:
// FAILED_PRECONDITION naming the first difference.
absl::Status CheckCheckpointModel(const Checkpoint& checkpoint,
                                  const TensorLayout& layout,
                                  const OptimizerConfig& optimizer);
// The same, and that it holds exactly `range`.
absl::Status CheckCheckpointMatches(const Checkpoint& checkpoint,
                                    const TensorLayout& layout,
                                    const OptimizerConfig& optimizer,
                                    const KeyRange& range);
// Elements held by `checkpoint` (the pieces' total length).
int64_t HeldElements(const Checkpoint& checkpoint);

// The file of a parameter-server shard / of an all-reduce job in `dir`.
std::string ShardCheckpointPath(const std::string& dir, int shard,
                                int num_shards);
std::string AllReduceCheckpointPath(const std::string& dir);
// The file of rank `rank` of `num_ranks`' own state in `dir`, beside the
// job's checkpoint: what differs from rank to rank (ring's compression
// hooks' error feedback; local_sgd's and diloco's parameters and optimizer
// state between averages).
std::string RankStateCheckpointPath(const std::string& dir, int rank,
                                    int num_ranks);

}  // namespace ringside

#endif  // RINGSIDE_CORE_CHECKPOINT_H_
