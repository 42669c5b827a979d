// Collective: the all-reduce family over one group of ranks, on plain spans
// of one device. Backends (Gloo on CPU, NCCL on CUDA) implement it and say
// which devices they support (Horovod's Enabled() idea), so a CPU host skips
// NCCL cleanly.
//
// Every call is blocking, collective (all ranks call it in the same order
// with the same sizes) and bounded by `timeout`: DEADLINE_EXCEEDED names the
// operation. After an error the group is unusable. Not thread-safe: one
// thread issues a group's calls.
#ifndef RINGSIDE_COLLECTIVES_COLLECTIVE_H_
#define RINGSIDE_COLLECTIVES_COLLECTIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/device.h"

namespace ringside {

enum class ReduceOp { kSum, kAverage };

// The pieces CPU rings (GlooCollective's ReduceScatter and AllGatherV)
// move at a time: 256 Ki floats (1 MiB), and at least 16 Ki floats
// (64 KiB) where RingPieceFloats cuts them smaller.
constexpr int64_t kRingPieceFloats = int64_t{256} << 10;
constexpr int64_t kMinRingPieceFloats = int64_t{16} << 10;

class Collective {
 public:
  virtual ~Collective() = default;

  virtual std::string backend() const = 0;  // "gloo", "nccl"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual bool Supports(Device device) const = 0;

  // In place: data becomes the sum (or average) over ranks.
  virtual absl::Status AllReduce(absl::Span<float> data, ReduceOp op,
                                 absl::Duration timeout) = 0;
  // In place: every rank ends with root's data.
  virtual absl::Status Broadcast(absl::Span<float> data, int root,
                                 absl::Duration timeout) = 0;
  // out = concatenation of every rank's `in` in rank order;
  // out.size() == size() * in.size().
  virtual absl::Status AllGather(absl::Span<const float> in,
                                 absl::Span<float> out,
                                 absl::Duration timeout) = 0;
  // The sharded pair (ZeRO, FSDP), in place over one flat buffer cut into
  // size() consecutive shards: shard i is `counts[i]` floats (any may be 0;
  // they sum to data.size(); the same on every rank) starting at the sum
  // of the counts before it.
  //
  // ReduceScatter: on return rank r's shard r of `data` holds the sum (or
  // average) over ranks of shard r; its other shards hold unspecified
  // values. Sends and receives (n-1)/n of the buffer per rank (a ring).
  virtual absl::Status ReduceScatter(absl::Span<float> data,
                                     absl::Span<const int64_t> counts,
                                     ReduceOp op, absl::Duration timeout) = 0;
  // AllGatherV: rank r contributes its shard r of `data`; on return every
  // rank's `data` holds every rank's shard.
  virtual absl::Status AllGatherV(absl::Span<float> data,
                                  absl::Span<const int64_t> counts,
                                  absl::Duration timeout) = 0;
  virtual absl::Status Barrier(absl::Duration timeout) = 0;
};

// INVALID_ARGUMENT (prefixed `what`) unless `counts` has `size` entries,
// none negative, summing to `elements`: the shards of ReduceScatter and
// AllGatherV.
absl::Status CheckShardCounts(absl::string_view what, int size,
                              absl::Span<const int64_t> counts,
                              size_t elements);
// counts[0] + ... + counts[i-1].
int64_t ShardOffset(absl::Span<const int64_t> counts, int i);
// The piece a CPU ring forwards for a call with these shard counts (the
// same on every rank): kRingPieceFloats, unless, with 3 or more ranks, the
// largest shard's chain through the ring, largest + (n−2)·min(largest,
// piece), outlasts the busiest link's bytes, total − min(counts) (a shard
// that one rank alone holds: zero2's buckets, zero3's tensors); then a
// quarter of the largest shard, within [kMinRingPieceFloats,
// kRingPieceFloats], so that the chain pipelines (a one-piece shard's n−1
// hops one after another become the shard plus (n−2) quarters). Equal
// shards keep the full piece: smaller ones would only add messages.
int64_t RingPieceFloats(absl::Span<const int64_t> counts);
// `elements` split into `size` >= 1 shards as even as they go: the first
// elements % size shards hold one more.
std::vector<int64_t> EvenShardCounts(int64_t elements, int size);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_COLLECTIVE_H_
