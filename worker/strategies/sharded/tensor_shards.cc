#include "worker/strategies/sharded/tensor_shards.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/status_macros.h"
#include "server/partitioner.h"

namespace ringside {

std::vector<int64_t> EvenCounts(int64_t elements, int world_size) {
  std::vector<int64_t> counts(world_size, elements / world_size);
  for (int64_t r = 0; r < elements % world_size; ++r) ++counts[r];
  return counts;
}

ShardPlan PerUnitShardPlan(const std::vector<KeyRange>& units,
                           int world_size) {
  ShardPlan plan;
  plan.units = units;
  for (const KeyRange& u : units) {
    plan.counts.push_back(EvenCounts(u.size(), world_size));
  }
  return plan;
}

absl::StatusOr<ShardPlan> ContiguousShardPlan(const TensorLayout& layout,
                                              int world_size) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Partitioner> partitioner,
                      MakePartitioner("even_bytes"));
  RS_ASSIGN_OR_RETURN(std::vector<KeyRange> ranges,
                      partitioner->Partition(layout, world_size));
  ShardPlan plan;
  plan.units = {KeyRange{0, layout.total_elements()}};
  plan.counts.emplace_back();
  for (const KeyRange& r : ranges) plan.counts[0].push_back(r.size());
  return plan;
}

absl::StatusOr<ShardPlan> ZeroShardPlan(const TensorLayout& layout,
                                        std::vector<KeyRange> units,
                                        int world_size, bool per_unit) {
  if (!per_unit) return ContiguousShardPlan(layout, world_size);
  std::sort(units.begin(), units.end(),
            [](const KeyRange& a, const KeyRange& b) {
              return a.begin < b.begin;
            });
  return PerUnitShardPlan(units, world_size);
}

TensorShards::TensorShards(const TensorLayout& layout,
                           const std::vector<int64_t>& counts, int rank)
    : TensorShards(layout,
                   ShardPlan{{KeyRange{0, layout.total_elements()}}, {counts}},
                   rank) {}

TensorShards::TensorShards(const TensorLayout& layout, ShardPlan plan,
                           int rank)
    : layout_(layout), plan_(std::move(plan)) {
  for (size_t u = 0; u < plan_.units.size(); ++u) {
    int64_t at = plan_.units[u].begin;
    for (int r = 0; r < rank; ++r) at += plan_.counts[u][r];
    const int64_t mine = plan_.counts[u][rank];
    if (mine > 0) pieces_.push_back(KeyRange{at, at + mine});
    owned_elements_ += mine;
  }
}

KeyRange TensorShards::RangeOf(int tensor) const {
  const TensorSpec& spec = layout_.tensor(tensor);
  return KeyRange{spec.offset, spec.offset + spec.size};
}

size_t TensorShards::UnitOf(int64_t at) const {
  const auto it = std::upper_bound(
      plan_.units.begin(), plan_.units.end(), at,
      [](int64_t x, const KeyRange& u) { return x < u.end; });
  return std::min<size_t>(it - plan_.units.begin(), plan_.units.size() - 1);
}

std::vector<int64_t> TensorShards::CountsWithin(const KeyRange& range) const {
  if (plan_.units.empty()) return {};
  const size_t u = UnitOf(range.begin);
  const KeyRange& unit = plan_.units[u];
  if (range.begin < unit.begin || range.end > unit.end) return {};
  std::vector<int64_t> share;
  int64_t begin = unit.begin;
  for (int64_t c : plan_.counts[u]) {
    const int64_t lo = std::max(begin, range.begin);
    const int64_t hi = std::min(begin + c, range.end);
    share.push_back(std::max<int64_t>(0, hi - lo));
    begin += c;
  }
  return share;
}

int64_t TensorShards::OutsideBytes(const KeyRange& range) const {
  int64_t inside = 0;
  auto it = std::upper_bound(
      pieces_.begin(), pieces_.end(), range.begin,
      [](int64_t x, const KeyRange& p) { return x < p.end; });
  for (; it != pieces_.end() && it->begin < range.end; ++it) {
    inside += std::min(range.end, it->end) - std::max(range.begin, it->begin);
  }
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
  // The gaps between this rank's pieces, within `range`.
  int64_t at = range.begin;
  auto it = std::upper_bound(
      pieces_.begin(), pieces_.end(), range.begin,
      [](int64_t x, const KeyRange& p) { return x < p.end; });
  for (; it != pieces_.end() && it->begin < range.end; ++it) {
    give_back(at, std::min(it->begin, range.end));
    at = std::max(at, it->end);
  }
  give_back(at, range.end);
}

}  // namespace ringside
