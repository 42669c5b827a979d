#include "worker/strategies/tensor_shards.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace ringside {

TensorShards::TensorShards(const TensorLayout& layout,
                           const std::vector<int64_t>& counts, int rank)
    : layout_(layout), rank_(rank) {
  int64_t at = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    if (r == rank) shard_ = KeyRange{at, at + counts[r]};
    at += counts[r];
  }
  for (int t = 0; t < layout.num_tensors(); ++t) {
    const TensorSpec& spec = layout.tensor(t);
    std::vector<int64_t> share;
    int64_t begin = 0;
    for (int64_t c : counts) {
      const int64_t lo = std::max(begin, spec.offset);
      const int64_t hi = std::min(begin + c, spec.offset + spec.size);
      share.push_back(std::max<int64_t>(0, hi - lo));
      begin += c;
    }
    counts_.push_back(std::move(share));
  }
}

int64_t TensorShards::outside_bytes(int tensor) const {
  return 4 * (layout_.tensor(tensor).size - counts_[tensor][rank_]);
}

void TensorShards::Release(absl::Span<float> buffer, int tensor) const {
  const TensorSpec& spec = layout_.tensor(tensor);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto give_back = [&](int64_t begin, int64_t end) {
    if (end <= begin) return;
    const uintptr_t lo =
        (reinterpret_cast<uintptr_t>(buffer.data() + begin) + page - 1) &
        ~(page - 1);
    const uintptr_t hi =
        reinterpret_cast<uintptr_t>(buffer.data() + end) & ~(page - 1);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  };
  const int64_t begin = spec.offset, end = spec.offset + spec.size;
  give_back(begin, std::min(end, shard_.begin));
  give_back(std::max(begin, shard_.end), end);
}

}  // namespace ringside
