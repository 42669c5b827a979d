// ParamShard: the state of one parameter server — its key range of the flat
// parameter buffer, the optimizer state for it, and one accumulation buffer —
// with synchronous (BSP) aggregation, chunk by chunk.
//
// The range is cut into fixed chunks (ChunkRange). Chunk c holds version v
// (= parameters after v optimizer steps). For step t a worker pushes the
// gradient of chunk c only while c is at version t; the push is summed in
// place into the accumulation buffer. When all N workers have pushed chunk c
// for step t, the sum is averaged, the optimizer steps chunk c, and c moves
// to version t+1 — so pulls of early chunks complete while later ones are
// still being pushed. Memory stays at parameters + optimizer state + one
// accumulation buffer whatever N is.
//
// A summation job (Registration::summation, the byteps strategy: BytePS's
// summation service) keeps no optimizer: the last push of chunk c for step t
// leaves the plain sum of the P = world_size / ranks_per_pusher pushes (one
// per host, each already its host's sum) as version t + 1, which the workers
// pull and step their own optimizers with. It needs no initial parameters
// (chunks start at the job's start_step) and writes no checkpoints (the
// workers checkpoint); pushing ranks are 0..P-1.
//
// Every mutating call validates its whole input before touching state: a
// rejected call leaves the shard unchanged.
//
// Thread-safe: all methods may be called concurrently from RPC handlers.
// Pushes of different chunks proceed in parallel (one lock per chunk).
#ifndef RINGSIDE_SERVER_PARAM_SHARD_H_
#define RINGSIDE_SERVER_PARAM_SHARD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/checkpoint.h"
#include "core/key_range.h"
#include "core/tensor_layout.h"
#include "models/optimizer.h"

namespace ringside {

struct ParamShardOptions {
  // Workers in the job (N); > 0. Pushes from ranks outside [0, N) fail.
  int num_workers = 1;
  // This server's shard index in [0, num_shards).
  int shard = 0;
  // Servers in the job (K); > 0. Registrations must agree.
  int num_shards = 1;
  // Write this shard's parameters, optimizer state and step to
  // ShardCheckpointPath(checkpoint_dir, ...) whenever every chunk reaches a
  // version that is a multiple of checkpoint_every (0: never). Needs a
  // non-empty checkpoint_dir when > 0.
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  // Most bytes the shard may hold for a job (parameters, accumulation
  // buffer, optimizer state, per-chunk bookkeeping): the first registration
  // of a model that needs more is refused with RESOURCE_EXHAUSTED instead of
  // exhausting the machine. >= 0; 0 (default): this machine's physical
  // memory.
  int64_t max_state_bytes = 0;

  absl::Status Validate() const;
};

// What a worker declares when it registers; the first registration fixes
// the job's configuration and later ones must match it exactly.
struct Registration {
  int rank = 0;
  int world_size = 0;
  TensorLayout layout;
  OptimizerConfig optimizer;
  int64_t chunk_bytes = 0;  // multiple of 4, > 0
  int num_shards = 0;
  std::string partitioner;
  // A summation job (the class comment): each pushing rank stands for
  // ranks_per_pusher >= 1 workers (dividing world_size); versions start at
  // start_step >= 0. Ignored unless summation.
  bool summation = false;
  int ranks_per_pusher = 1;
  int64_t start_step = 0;
};

class ParamShard {
 public:
  explicit ParamShard(const ParamShardOptions& options);
  ParamShard(const ParamShard&) = delete;
  ParamShard& operator=(const ParamShard&) = delete;

  // Continue from `checkpoint` (call before any Register): the first
  // registration checks that it matches the job's layout, optimizer and
  // this shard's key range (FAILED_PRECONDITION otherwise, state unchanged),
  // then every chunk starts at version checkpoint.step with its parameters
  // and optimizer state. INVALID_ARGUMENT if the shard/num_shards differ
  // from this server's.
  absl::Status Resume(Checkpoint checkpoint);
  // The step the job resumes at, or -1 when it starts fresh.
  int64_t resume_step() const;
  // The optimizer configuration the first registration fixed (the workers'
  // learning rate after scaling, its warm-up, ...); nullopt before it and
  // in a summation job, which applies none.
  std::optional<OptimizerConfig> job_optimizer() const;
  // Whether the first registration made this a summation job.
  bool summation_job() const;

  // Registers a worker and returns this shard's key range. Non-blocking.
  // INVALID_ARGUMENT: unknown rank, bad chunk size, world size or shard
  // count differing from the server's; FAILED_PRECONDITION: layout,
  // optimizer, chunking or partitioner differing from the first worker's;
  // ALREADY_EXISTS: the rank registered before; RESOURCE_EXHAUSTED: the
  // model's share would not fit in max_state_bytes.
  absl::StatusOr<KeyRange> Register(const Registration& r);
  // Largest chunk a registration may ask for (one gRPC message each).
  static constexpr int64_t kMaxChunkBytes = int64_t{1} << 30;
  // INVALID_ARGUMENT unless 0 <= rank < num_workers (a summation job's
  // pushers once it registered).
  absl::Status CheckRank(int rank) const;

  // Stores initial values of one chunk (rank 0 only, once per chunk); the
  // chunk then reaches version 0. Non-blocking.
  absl::Status PushInit(int rank, int64_t offset, absl::string_view dtype,
                        absl::string_view data);

  // Adds one worker's gradient chunk for `step` (see the class comment).
  // Non-blocking apart from the per-chunk lock; the last push of a chunk
  // runs the optimizer on it.
  absl::Status PushGradient(int rank, int64_t step, int64_t offset,
                            absl::string_view dtype, absl::string_view data);
  // The same with the payload in pieces, as it arrived (common/chunk_wire.h):
  // summed straight from them.
  absl::Status PushGradient(int rank, int64_t step, int64_t offset,
                            absl::string_view dtype,
                            absl::Span<const absl::string_view> payload);

  // Pull cursor: which chunks of `version` a puller still needs.
  struct PullCursor {
    int64_t version = 0;
    std::vector<bool> sent;
    int remaining = 0;
  };
  absl::StatusOr<PullCursor> StartPull(int rank, int64_t version);

  // Blocks until some unsent chunk of the cursor's version is ready, or the
  // deadline passes; copies it into *data, sets *offset and marks it sent.
  // DEADLINE_EXCEEDED names the chunks and the ranks still missing;
  // FAILED_PRECONDITION if the version is already gone.
  absl::Status NextReadyChunk(PullCursor* cursor, absl::Time deadline,
                              int64_t* offset, std::string* data);
  // The same without the copy: *data views the shard's parameters. The view
  // holds this version until every worker has pushed the next step, i.e.
  // at least until every worker has received this version in full (the
  // protocol: a worker pushes step v only after its pull of version v).
  absl::Status NextReadyChunk(PullCursor* cursor, absl::Time deadline,
                              int64_t* offset, absl::Span<const float>* data);

  // Marks a worker finished. Non-blocking.
  absl::Status Finish(int rank);
  // Blocks until every worker has finished or the deadline passes; true if
  // all finished.
  bool WaitAllFinished(absl::Time deadline);

  // Checkpoints written so far, and the last write error (OK if none).
  int64_t checkpoints_written() const;
  absl::Status checkpoint_error() const;
  // Fails every pending and later PushInit, PushGradient, NextReadyChunk
  // and WaitAllFinished with `reason` (not OK; e.g. UNAVAILABLE naming a
  // lost worker). The first reason sticks. Non-blocking.
  void Abort(const absl::Status& reason);
  // The reason given to Abort, or OK.
  absl::Status aborted() const;

  // Update accounting, to check that no gradient was lost or applied twice.
  struct UpdateCounts {
    int chunks = 0;
    // Pushes accepted per (rank, chunk): min and max over all pairs.
    int64_t pushes_min = 0, pushes_max = 0;
    // Pushes accepted per rank, over all its chunks.
    std::vector<int64_t> pushes_per_rank;
    // Optimizer steps applied per chunk: min and max.
    int64_t applied_min = 0, applied_max = 0;
    // Pushes refused: a rank pushing a chunk twice for one step, and pushes
    // for a step other than the chunk's (stale or future).
    int64_t duplicates_refused = 0, wrong_step_refused = 0;
    // Chunk versions: min and max.
    int64_t min_version = -1, max_version = -1;
  };
  UpdateCounts Counts() const;

  // Bytes held: parameters + accumulation buffer + optimizer state.
  int64_t MemoryBytes() const;
  // Current version of every chunk is at least this (for logs/tests).
  int64_t MinVersion() const;
  // Copies this shard's parameters (tests, checkpoints).
  std::vector<float> Parameters() const;
  KeyRange range() const;
  // Elements per chunk (the last chunk may be shorter); 0 before the first
  // registration.
  int64_t chunk_elements() const;

 private:
  struct Chunk {
    KeyRange range;
    mutable absl::Mutex mu;
    std::vector<bool> pushed;  // by rank, for the current version
    int num_pushed = 0;
    std::vector<int64_t> accepted;  // pushes accepted, by rank, ever
    int64_t applied = 0;            // optimizer steps applied, ever
  };

  // Finds the chunk starting at `offset`; INVALID_ARGUMENT naming the owner
  // of the offset otherwise. Requires configured_.
  absl::StatusOr<int> ChunkAt(int64_t offset) const;
  absl::Status CheckPayload(const Chunk& chunk, absl::string_view dtype,
                            int64_t bytes) const;
  // RESOURCE_EXHAUSTED unless `range` of the model `r` registers fits in
  // options_.max_state_bytes.
  absl::Status CheckStateFits(const Registration& r,
                              const KeyRange& range) const;
  // Averages the summed gradient of elements [local, local + n) of this
  // shard and steps the optimizer on them (the last push of their chunk);
  // a summation job's serves the sum as it is.
  void ApplyBlock(int64_t local, int64_t n, int64_t step);
  // Moves a chunk whose every element was applied to version step + 1
  // (and checkpoints when the whole shard got there).
  void AdvanceChunk(Chunk& chunk, int64_t step);
  // Called by the chunk that completes `version` everywhere, under
  // versions_mu_: snapshots the shard (no chunk can move on meanwhile).
  Checkpoint SnapshotLocked(int64_t version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(versions_mu_);
  void WriteCheckpoint(const Checkpoint& checkpoint);
  std::string MissingRanks(int c) const;

  const ParamShardOptions options_;

  mutable absl::Mutex config_mu_;
  std::unique_ptr<Checkpoint> resume_ ABSL_GUARDED_BY(config_mu_);
  int64_t resume_step_ ABSL_GUARDED_BY(config_mu_) = -1;
  mutable absl::Mutex checkpoint_mu_;
  int64_t checkpoints_written_ ABSL_GUARDED_BY(checkpoint_mu_) = 0;
  absl::Status checkpoint_error_ ABSL_GUARDED_BY(checkpoint_mu_);
  bool configured_ ABSL_GUARDED_BY(config_mu_) = false;
  Registration config_ ABSL_GUARDED_BY(config_mu_);
  std::vector<bool> registered_ ABSL_GUARDED_BY(config_mu_);
  std::vector<bool> finished_ ABSL_GUARDED_BY(config_mu_);
  int num_finished_ ABSL_GUARDED_BY(config_mu_) = 0;
  std::vector<KeyRange> all_ranges_;  // set once when configured
  KeyRange range_;                    // set once when configured
  int64_t chunk_elements_ = 0;        // set once when configured
  TensorLayout job_layout_;           // set once when configured
  OptimizerConfig job_optimizer_;     // set once when configured
  bool summation_ = false;            // set once when configured
  // Ranks that push every chunk: num_workers, or a summation job's
  // world_size / ranks_per_pusher once configured.
  std::atomic<int> pushers_;

  // Set once when configured; element data guarded by the chunk locks.
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<float> params_;
  std::vector<float> accum_;
  std::unique_ptr<Optimizer> optimizer_;  // null in a summation job

  // Version per chunk (-1 = not initialized); changes under the chunk's lock
  // and versions_mu_, waited on under versions_mu_.
  mutable absl::Mutex versions_mu_;
  std::vector<int64_t> versions_ ABSL_GUARDED_BY(versions_mu_);

  // Abort's reason, kept under both locks so that waits on either wake.
  absl::Status abort_ ABSL_GUARDED_BY(versions_mu_);
  absl::Status abort_finish_ ABSL_GUARDED_BY(config_mu_);
  std::atomic<int64_t> duplicates_refused_{0};
  std::atomic<int64_t> wrong_step_refused_{0};
};

}  // namespace ringside

#endif  // RINGSIDE_SERVER_PARAM_SHARD_H_
