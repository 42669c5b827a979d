#include "worker/strategies/sharded/tensor_shards.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace ringside {

TensorShards::TensorShards(const TensorLayout& layout,
                           const std::vector<int64_t>& counts, int rank)
    : layout_(layout), rank_counts_(counts), rank_(rank) {
  int64_t at = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    if (r == rank) shard_ = KeyRange{at, at + counts[r]};
    at += counts[r];
  }
  for (int t = 0; t < layout.num_tensors(); ++t) {
    counts_.push_back(CountsWithin(RangeOf(t)));
  }
}

KeyRange TensorShards::RangeOf(int tensor) const {
  const TensorSpec& spec = layout_.tensor(tensor);
  return KeyRange{spec.offset, spec.offset + spec.size};
}

std::vector<int64_t> TensorShards::CountsWithin(const KeyRange& range) const {
  std::vector<int64_t> share;
  int64_t begin = 0;
  for (int64_t c : rank_counts_) {
    const int64_t lo = std::max(begin, range.begin);
    const int64_t hi = std::min(begin + c, range.end);
    share.push_back(std::max<int64_t>(0, hi - lo));
    begin += c;
  }
  return share;
}

int64_t TensorShards::outside_bytes(int tensor) const {
  return OutsideBytes(RangeOf(tensor));
}

int64_t TensorShards::OutsideBytes(const KeyRange& range) const {
  const int64_t inside = std::max<int64_t>(
      0, std::min(range.end, shard_.end) - std::max(range.begin, shard_.begin));
  return 4 * (range.size() - inside);
}

void TensorShards::Release(absl::Span<float> buffer, int tensor) const {
  Release(buffer, RangeOf(tensor));
}

void TensorShards::Release(absl::Span<float> buffer,
                           const KeyRange& range) const {
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
  give_back(range.begin, std::min(range.end, shard_.begin));
  give_back(std::max(range.begin, shard_.end), range.end);
}

}  // namespace ringside
