// ShardedOptimizer: ZeRO's partitioned optimizer, shared by zero1, zero2
// and zero3. The flat buffer is cut among the ranks by a ShardPlan
// (tensor_shards.h: per unit, as FSDP, or contiguous, as DeepSpeed's stage
// 1/2); each rank holds the optimizer state of its own pieces only (1/N of
// it, ZeRO stage 1), steps its pieces of the parameters with its pieces of
// the averaged gradients, and all-gathers every rank's updated pieces unit
// by unit, so all ranks end with bit-identical parameters.
//
// On context.device == kCuda the state lives in device memory (a
// CudaOptimizer for the pieces, applied on context.compute_stream and
// waited for, timed with CUDA events) and the collective is the job's NCCL
// group; checkpoints of CUDA workers are refused (UNIMPLEMENTED), as for
// the all-reduce strategies' local optimizer. The CUDA path has run at one
// worker on an H100 and an H200 (tools/gpu_check.sh, docs/GPU_RESULTS.md),
// never at two or more.
//
// Checkpoints (checkpoint format 2): every rank writes its own pieces and
// their optimizer state. Resume takes the newest complete set of shard
// files in the directory, whatever the number of ranks and the plan that
// wrote it: each rank copies the elements of its own pieces out of the
// files that hold them (sharded_checkpoint.h), as PyTorch's distributed
// checkpoint reshards.
//
// Timeline (SyncOptions::timeline, when set): OPTIMIZER (this rank's
// pieces) and CHECKPOINT on lane "step", ALLGATHER (the parameters) on
// every tensor's lane.
// Not thread-safe: the training thread's (SyncStrategy contract), except
// GatherParams, which may run on one other thread at a time.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_OPTIMIZER_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "core/key_range.h"
#include "device/cuda_event.h"
#include "models/cuda/cuda_optimizer.h"
#include "models/optimizer.h"
#include "worker/strategies/sharded/tensor_shards.h"
#include "worker/sync_strategy.h"

namespace ringside {

class ShardedOptimizer {
 public:
  // `context` (its spans) and `collective` (the job's ranks) must outlive
  // it; `plan` tiles the layout's buffer. INVALID_ARGUMENT for a bad
  // optimizer config.
  static absl::StatusOr<std::unique_ptr<ShardedOptimizer>> Create(
      const SyncContext& context, Collective* collective, ShardPlan plan);

  // The plan, and this rank's pieces of it.
  const TensorShards& shards() const { return shards_; }
  // Bytes of optimizer state this rank holds (its pieces' only; host or
  // device memory).
  int64_t state_bytes() const;

  // Steps the optimizer on this rank's pieces only (context.grads holds the
  // averaged gradient there). Stats: the optimizer's time (device time on
  // kCuda, where it returns once the update is final).
  absl::StatusOr<StepStats> Step(int64_t step);
  // All-gathers every unit of the parameters (context.params), one
  // collective per unit, each bounded by options.rpc_timeout; errors name
  // `what`. Stats: the bytes each way ((n-1)/n of the buffer) and their
  // PipelinedRingCriticalBytes.
  absl::StatusOr<StepStats> GatherParams(const std::string& what);
  // Step, then GatherParams. Blocking. Stats: both.
  absl::StatusOr<StepStats> StepAndGather(int64_t step);

  // When options.checkpoint_every divides step + 1: this rank writes its
  // pieces of the parameters and their optimizer state after `step` to
  // ShardCheckpointPath(checkpoint_dir, rank, N) (atomic, checksummed).
  // Every rank writes its own file.
  absl::Status MaybeCheckpoint(int64_t step);
  // When options.resume: every rank loads its pieces from the newest
  // complete set of shard files in checkpoint_dir (any number of ranks, any
  // plan: LoadShardedCheckpoint), the ranks check that they agree on the
  // step and all-gather the parameters. NOT_FOUND naming the directory
  // when it holds no complete set. Returns the step to start at (0 without
  // resume). Collective: every rank calls it.
  absl::StatusOr<int64_t> Resume();

 private:
  ShardedOptimizer(const SyncContext& context, Collective* collective,
                   TensorShards shards)
      : context_(context), collective_(collective), shards_(std::move(shards)) {}

  SyncContext context_;
  Collective* collective_;
  TensorShards shards_;
  std::unique_ptr<Optimizer> optimizer_;  // kCpu: state for shard_ only
  std::unique_ptr<CudaOptimizer> device_optimizer_;  // kCuda: the same
  OwnedCudaEvent start_, stop_;                      // kCuda: its timing
};

// How zero1, zero2 and zero3 start: the job's Gloo group (through
// context.options.store; an in-process store of its own for a
// single-worker job, kept here because the group uses it), rank 0's
// initial parameters broadcast into context.params, this rank's
// ShardedOptimizer over `plan` and the step to start at
// (ShardedOptimizer::Resume).
// Collective: every rank calls it. Move the members out in this order of
// destruction: optimizer, collective, own_store.
struct ShardedStart {
  std::unique_ptr<InMemoryStore> own_store;
  std::unique_ptr<Collective> collective;
  std::unique_ptr<ShardedOptimizer> optimizer;
  int64_t start_step = 0;
};
absl::StatusOr<ShardedStart> StartSharded(const SyncContext& context,
                                          const std::string& name,
                                          ShardPlan plan);

// Bytes each rank sends (and receives) in a ring reduce-scatter or
// all-gather of `bytes` over `world_size` ranks: (n-1)/n of them.
int64_t ShardedPhaseBytes(int64_t bytes, int world_size);

// The bytes a ring reduce-scatter or all-gather with these shards
// (`counts`, floats, one per rank) keeps its busiest link sending one after
// another, when each piece of `piece_floats` is forwarded as soon as it
// lands (GlooCollective's ReduceScatter and AllGatherV, whose pieces are
// RingPieceFloats(counts), collectives/collective.h):
// the busiest link carries every shard but one, total − min(counts), and
// the largest shard's last piece arrives (n−2) pieces after its first,
// largest + (n−2)·min(largest, piece); the larger of the two, in bytes.
// ShardedPhaseBytes when the shards are equal; a shard that one rank alone
// holds (zero3's tensors) costs about its own size, not (n−1) times it, as
// it would in a ring whose steps wait for each other. 0 for one rank.
int64_t PipelinedRingCriticalBytes(absl::Span<const int64_t> counts,
                                   int64_t piece_floats);

// One `phase` span [start_s, end_s] on every tensor's lane (args: step,
// the tensor's bytes): a collective over the whole flat buffer, as the
// per-tensor timeline of the other strategies shows theirs. No-op without
// a timeline.
void RecordWholeBufferSpans(const SyncContext& context, const char* phase,
                            double start_s, double end_s, int64_t step);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_OPTIMIZER_H_
