// Fusion planning: which all-reduces one cycle issues for the tensors ready
// on every rank. Tensors are taken in the given order and packed into
// batches of at most `threshold_bytes`; one all-reduce per batch.
//   - threshold 0 turns fusion off: one batch per tensor.
//   - a tensor larger than the threshold gets a batch of its own.
//   - a batch whose tensors cover one contiguous range of the flat gradient
//     buffer is reduced in place (no fusion-buffer copies) when
//     `in_place_contiguous`; a single tensor always is. Otherwise the batch
//     goes through the fusion buffer: copy in, all-reduce, copy out.
// Pure functions; thread-safe.
#ifndef RINGSIDE_COLLECTIVES_FUSION_FUSION_PLAN_H_
#define RINGSIDE_COLLECTIVES_FUSION_FUSION_PLAN_H_

#include <cstdint>
#include <vector>

#include "core/tensor_layout.h"

namespace ringside {

struct FusedBatch {
  std::vector<int> tensors;  // in execution (and fusion-buffer) order
  int64_t elements = 0;      // total
  bool in_place = false;     // reduce grads[offset, offset + elements)
  int64_t offset = 0;        // only meaningful when in_place
};

std::vector<FusedBatch> PlanFusion(const TensorLayout& layout,
                                   const std::vector<int>& ready,
                                   int64_t threshold_bytes,
                                   bool in_place_contiguous);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_FUSION_PLAN_H_
