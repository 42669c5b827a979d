// ResponseCache: the tensors every rank has negotiated before, each with a
// bit position. All ranks insert the same tensors in the same order (the
// coordinator's responses are broadcast), so a tensor has the same bit on
// every rank, and in steady state ranks exchange one bit per cached tensor
// instead of requests (Horovod's response cache). Tensors are identified by
// their index in the layout, which the runtime checks is identical on every
// rank. Capacity 0 disables the cache; a full cache admits nothing more (no
// eviction), so later tensors keep negotiating by request.
// Thread-compatible (owned by the runtime's background thread).
#ifndef RINGSIDE_COLLECTIVES_FUSION_RESPONSE_CACHE_H_
#define RINGSIDE_COLLECTIVES_FUSION_RESPONSE_CACHE_H_

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ringside {

class ResponseCache {
 public:
  explicit ResponseCache(int capacity) : capacity_(capacity) {}

  // The bit of `tensor`, or nullopt on a miss.
  std::optional<int> BitOf(int tensor) const;
  // The tensor at `bit` (0 <= bit < size()).
  int TensorAt(int bit) const { return tensors_[bit]; }
  // Adds `tensor` at the next bit unless present or full; true if added.
  bool Put(int tensor);
  int size() const { return static_cast<int>(tensors_.size()); }
  int capacity() const { return capacity_; }

 private:
  const int capacity_;
  std::vector<int> tensors_;               // bit -> tensor
  absl::flat_hash_map<int, int> bit_of_;  // tensor -> bit
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_RESPONSE_CACHE_H_
