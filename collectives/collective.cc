#include "collectives/collective.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status CheckShardCounts(absl::string_view what, int size,
                              absl::Span<const int64_t> counts,
                              size_t elements) {
  if (counts.size() != static_cast<size_t>(size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", counts.size(), " shard counts for ", size, " ranks"));
  }
  int64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": shard ", i, " has a negative count (", counts[i], ")"));
    }
    total += counts[i];
  }
  if (total != static_cast<int64_t>(elements)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shard counts sum to ", total, ", the buffer has ",
                     elements, " floats"));
  }
  return absl::OkStatus();
}

int64_t ShardOffset(absl::Span<const int64_t> counts, int i) {
  int64_t offset = 0;
  for (int j = 0; j < i; ++j) offset += counts[j];
  return offset;
}

int64_t RingPieceFloats(absl::Span<const int64_t> counts) {
  const int64_t n = static_cast<int64_t>(counts.size());
  if (n < 3) return kRingPieceFloats;
  int64_t total = 0, largest = 0, smallest = counts[0];
  for (int64_t c : counts) {
    total += c;
    largest = std::max(largest, c);
    smallest = std::min(smallest, c);
  }
  const int64_t chain = largest + (n - 2) * std::min(largest, kRingPieceFloats);
  if (chain <= total - smallest) return kRingPieceFloats;
  return std::clamp((largest + 3) / 4, kMinRingPieceFloats, kRingPieceFloats);
}

std::vector<int64_t> EvenShardCounts(int64_t elements, int size) {
  std::vector<int64_t> counts(size, elements / size);
  for (int64_t i = 0; i < elements % size; ++i) ++counts[i];
  return counts;
}

}  // namespace ringside
