// TensorShards: a flat buffer's byte-balanced shards (ShardedOptimizer's)
// seen tensor by tensor, for the strategies that keep only their own shard
// of a buffer in memory (zero2's gradients, zero3's parameters and
// gradients): each rank's share of a tensor (the counts of a reduce-scatter
// or all-gather of that tensor alone), the bytes of a tensor outside this
// rank's shard, and giving those pages back to the operating system.
// Immutable after construction; thread-safe.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/key_range.h"
#include "core/tensor_layout.h"

namespace ringside {

class TensorShards {
 public:
  // `counts`: each rank's shard of the whole buffer, in rank order (they
  // tile it); `rank`: this rank.
  TensorShards(const TensorLayout& layout, const std::vector<int64_t>& counts,
               int rank);

  // Each rank's share of `tensor`, in rank order (zeros included).
  const std::vector<int64_t>& counts(int tensor) const {
    return counts_[tensor];
  }
  // The same for any range [begin, end) of the flat buffer (a bucket of
  // adjacent tensors).
  std::vector<int64_t> CountsWithin(const KeyRange& range) const;
  // Bytes of `tensor` (of `range`) outside this rank's shard.
  int64_t outside_bytes(int tensor) const;
  int64_t OutsideBytes(const KeyRange& range) const;
  // Gives back (madvise MADV_DONTNEED) the pages of host `buffer` (the
  // layout's flat buffer) wholly inside `tensor` (`range`) and outside this
  // rank's shard: they read as zeros until written again. Pages shared
  // with the rest of the buffer or with the shard stay. Advice only: where
  // the kernel refuses, the pages stay.
  void Release(absl::Span<float> buffer, int tensor) const;
  void Release(absl::Span<float> buffer, const KeyRange& range) const;
  // [offset, offset + size) of `tensor`.
  KeyRange RangeOf(int tensor) const;
  // This rank's shard of the flat buffer.
  const KeyRange& shard() const { return shard_; }

 private:
  TensorLayout layout_;
  std::vector<int64_t> rank_counts_;
  KeyRange shard_;
  int rank_;
  std::vector<std::vector<int64_t>> counts_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_
