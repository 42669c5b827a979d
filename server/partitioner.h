// Partitioner: cuts the flat parameter buffer into contiguous key ranges,
// one per parameter server (ps-lite's range sharding). Large tensors may be
// split across servers. Every worker and server computes the partition
// from the same (layout, num_shards), so it must be deterministic.
// Implementations are immutable: thread-safe.
#ifndef RINGSIDE_SERVER_PARTITIONER_H_
#define RINGSIDE_SERVER_PARTITIONER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/key_range.h"
#include "core/tensor_layout.h"

namespace ringside {

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  virtual std::string name() const = 0;
  // Returns num_shards ranges covering [0, layout.total_elements()) in
  // order, without overlap. A range may be empty when there are more
  // shards than elements. INVALID_ARGUMENT if num_shards < 1.
  virtual absl::StatusOr<std::vector<KeyRange>> Partition(
      const TensorLayout& layout, int num_shards) const = 0;
};

// "even_bytes": byte-balanced ranges; shard i owns
// [floor(i*T/K), floor((i+1)*T/K)), so sizes differ by at most one element.
std::unique_ptr<Partitioner> MakeEvenBytesPartitioner();

// Partitioner by name ("even_bytes"); INVALID_ARGUMENT lists known names.
absl::StatusOr<std::unique_ptr<Partitioner>> MakePartitioner(
    const std::string& name);

// Cuts `range` into chunks of at most `chunk_elements` (> 0), in order; the
// last chunk may be shorter. Workers and servers use the same chunking.
std::vector<KeyRange> ChunkRange(const KeyRange& range, int64_t chunk_elements);

}  // namespace ringside

#endif  // RINGSIDE_SERVER_PARTITIONER_H_
