#include "collectives/fusion/fusion_plan.h"

#include <algorithm>

namespace ringside {
namespace {

// Sets in_place/offset when the batch's tensors tile one range exactly.
void MarkInPlace(const TensorLayout& layout, bool allowed, FusedBatch* batch) {
  std::vector<int> by_offset = batch->tensors;
  std::sort(by_offset.begin(), by_offset.end(), [&](int a, int b) {
    return layout.tensor(a).offset < layout.tensor(b).offset;
  });
  int64_t end = layout.tensor(by_offset.front()).offset;
  for (int t : by_offset) {
    if (layout.tensor(t).offset != end) return;
    end += layout.tensor(t).size;
  }
  if (!allowed && batch->tensors.size() > 1) return;
  batch->in_place = true;
  batch->offset = layout.tensor(by_offset.front()).offset;
}

}  // namespace

std::vector<FusedBatch> PlanFusion(const TensorLayout& layout,
                                   const std::vector<int>& ready,
                                   int64_t threshold_bytes,
                                   bool in_place_contiguous) {
  std::vector<FusedBatch> batches;
  FusedBatch current;
  auto close = [&] {
    if (current.tensors.empty()) return;
    MarkInPlace(layout, in_place_contiguous, &current);
    batches.push_back(std::move(current));
    current = FusedBatch();
  };
  for (int t : ready) {
    const int64_t bytes = layout.tensor(t).size * 4;
    if (current.elements * 4 + bytes > threshold_bytes) close();
    current.tensors.push_back(t);
    current.elements += layout.tensor(t).size;
    if (bytes >= threshold_bytes) close();  // alone: too big to share
  }
  close();
  return batches;
}

}  // namespace ringside
