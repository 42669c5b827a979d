// ShardedGradients: the gradients of zero2 and zero3, reduced to this
// rank's shard as backward makes them. At construction, on CPU workers, the
// gradient buffer outside this rank's shard is given back to the OS
// (TensorShards::Release). Reduce(first, last) queues on the strategy's
// communication thread the reduce-scatter (average) of the gradients of
// the adjacent tensors [first, last] over the collective, once each is
// final (CUDA: its ready event); the reduced span's part outside the shard
// is then given back (CPU) and a REDUCE_SCATTER span recorded on each
// tensor's lane.
//
// It counts what the gradients take: this rank's shard plus the gradients
// queued and not yet reduced on CPU workers, the whole buffer on CUDA ones
// (zero2 does not give device memory back) unless `logical` (zero3: the
// shard plus the unreduced gradients there too, what the strategy holds;
// on device pages, `pages` below, also what is mapped, page for page):
// peak_bytes, the final record's grad_bytes. TakeStepBytes: the bytes each
// way the reductions queued since its last call, and their
// PipelinedRingCriticalBytes (sharded_optimizer.h) in `critical`.
//
// `pages` (zero3 on a CUDA worker whose gradients are mapped page by page,
// SyncContext::grad_pages; null otherwise): the caller holds each reduced
// range's pages from before the model writes them; once its reduce-scatter
// has returned, the reduction drops that hold (the pages outside this
// rank's pieces, which the caller holds for good, are unmapped).
//
// Thread-safety: construction, Reduce, peak_bytes and TakeStepBytes on the
// training thread; the queued work runs on `comm`'s thread. `context`,
// `collective`, `shards` and `comm` must outlive it and the work it queued.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_GRADIENTS_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_GRADIENTS_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "collectives/collective.h"
#include "device/mapped_device_buffer.h"
#include "worker/strategies/comm/sequenced_comm_thread.h"
#include "worker/strategies/sharded/tensor_shards.h"
#include "worker/sync_strategy.h"

namespace ringside {

class ShardedGradients {
 public:
  ShardedGradients(const SyncContext& context, Collective& collective,
                   const TensorShards& shards, SequencedCommThread& comm,
                   bool logical = false,
                   MappedDeviceBuffer* pages = nullptr);
  ShardedGradients(const ShardedGradients&) = delete;
  ShardedGradients& operator=(const ShardedGradients&) = delete;

  // Queues the reduction of tensors [first_tensor, last_tensor] (adjacent
  // in the flat buffer) of `step`. Errors (naming the tensors and the
  // step) surface through `comm`'s waits.
  void Reduce(int first_tensor, int last_tensor, int64_t step);
  int64_t peak_bytes() const { return peak_bytes_; }
  int64_t TakeStepBytes(int64_t* critical);

 private:
  // The queued work, on the communication thread; `counts`: each rank's
  // share of the tensors' range (TensorShards::CountsWithin).
  absl::Status ReduceNow(int first_tensor, int last_tensor, int64_t step,
                         int64_t outside_bytes,
                         const std::vector<int64_t>& counts);

  const SyncContext& context_;
  Collective& collective_;
  const TensorShards& shards_;
  SequencedCommThread& comm_;
  const bool counts_shard_;  // CPU, or `logical`: the shard is what's held
  MappedDeviceBuffer* const pages_;
  std::atomic<int64_t> held_bytes_{0};  // both threads
  int64_t peak_bytes_ = 0;
  int64_t step_bytes_ = 0;
  int64_t step_critical_bytes_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_SHARDED_GRADIENTS_H_
