// TensorShards: how ZeRO's flat buffers are cut among the ranks, and what
// that means tensor by tensor. A ShardPlan tiles the buffer with units
// (adjacent ranges) and cuts each unit into one contiguous piece per rank,
// in rank order; this rank owns its piece of every unit (its "pieces").
// Two plans (--zero_layout):
//   per_unit    every unit (zero2: a DDP bucket; zero3: a tensor) cut
//               evenly, ragged by at most one element, as FSDP shards each
//               unit's flat parameter: a collective over a unit sends
//               (n−1)/n of it from every rank;
//   contiguous  one unit, the whole buffer, byte-balanced (the "even_bytes"
//               partition): DeepSpeed's stage 1/2 layout, where a bucket or
//               tensor mostly lies in one rank's shard.
// For a range inside one unit (a bucket, a tensor) it gives each rank's
// share (the counts of a reduce-scatter or all-gather of that range alone),
// the bytes outside this rank's pieces, and gives those pages back to the
// operating system. Immutable after construction; thread-safe.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/key_range.h"
#include "core/tensor_layout.h"

namespace ringside {

struct ShardPlan {
  std::vector<KeyRange> units;               // tile the buffer, in order
  std::vector<std::vector<int64_t>> counts;  // per unit: each rank's piece
};

// `elements` cut into `world_size` pieces differing by at most one, the
// longer first.
std::vector<int64_t> EvenCounts(int64_t elements, int world_size);
// Each of `units` (tiling the buffer, in order) cut by EvenCounts.
ShardPlan PerUnitShardPlan(const std::vector<KeyRange>& units, int world_size);
// One unit: the whole buffer, byte-balanced ("even_bytes").
absl::StatusOr<ShardPlan> ContiguousShardPlan(const TensorLayout& layout,
                                              int world_size);
// A ZeRO stage's plan: `units` (tiling the buffer, in any order) each cut
// evenly when `per_unit`, else ContiguousShardPlan.
absl::StatusOr<ShardPlan> ZeroShardPlan(const TensorLayout& layout,
                                        std::vector<KeyRange> units,
                                        int world_size, bool per_unit);

class TensorShards {
 public:
  // `plan` tiles `layout`'s buffer; `rank`: this rank.
  TensorShards(const TensorLayout& layout, ShardPlan plan, int rank);
  // The contiguous plan of explicit `counts` (one per rank, tiling the
  // buffer).
  TensorShards(const TensorLayout& layout, const std::vector<int64_t>& counts,
               int rank);

  const ShardPlan& plan() const { return plan_; }
  // This rank's pieces (non-empty, in buffer order) and their length.
  const std::vector<KeyRange>& pieces() const { return pieces_; }
  int64_t owned_elements() const { return owned_elements_; }

  // Each rank's share of a range [begin, end) inside one unit (a bucket of
  // adjacent tensors, a tensor), in rank order (zeros included): the
  // counts of a reduce-scatter or all-gather of that range alone. A range
  // across units has no such counts: empty.
  std::vector<int64_t> CountsWithin(const KeyRange& range) const;
  // Bytes of `range` outside this rank's pieces.
  int64_t OutsideBytes(const KeyRange& range) const;
  // Gives back (madvise MADV_DONTNEED) the pages of host `buffer` (the
  // layout's flat buffer) wholly inside `tensor` (`range`) and outside this
  // rank's pieces: they read as zeros until written again. Pages shared
  // with the rest of the buffer or with a piece stay. Advice only: where
  // the kernel refuses, the pages stay.
  void Release(absl::Span<float> buffer, int tensor) const;
  void Release(absl::Span<float> buffer, const KeyRange& range) const;
  // [offset, offset + size) of `tensor`.
  KeyRange RangeOf(int tensor) const;

 private:
  // The index of the unit holding element `at`.
  size_t UnitOf(int64_t at) const;

  TensorLayout layout_;
  ShardPlan plan_;
  std::vector<KeyRange> pieces_;
  int64_t owned_elements_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_TENSOR_SHARDS_H_
