// Gradient buckets: PyTorch DDP's scheme for all-reducing gradients in few
// calls. Tensors are taken in backward's order (the layout's last first);
// each joins the open bucket, and the bucket closes once it holds at least
// its cap — `first_cap_bytes` for the first bucket (small, so that
// communication starts early in backward), `cap_bytes` for the rest. A
// bucket's tensors are adjacent in the flat buffer, so it is one span
// reduced in place, with no copy. The assignment depends only on the
// layout and the caps: every rank and every run get the same buckets, and
// the reduction order, hence the result, does not depend on timing.
// cap_bytes == 0: one bucket per tensor.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GRADIENT_BUCKETS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GRADIENT_BUCKETS_H_

#include <cstdint>
#include <vector>

#include "core/tensor_layout.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "nlohmann/json.hpp"

namespace ringside {

struct GradientBucket {
  int first_tensor = 0;  // layout indices [first_tensor, last_tensor]
  int last_tensor = 0;
  int64_t offset = 0;  // span of the flat buffer, in elements
  int64_t size = 0;
  int num_tensors() const { return last_tensor - first_tensor + 1; }
};

// Buckets in the order backward fills them (the one holding the layout's
// last tensor first). Tensors not adjacent in the flat buffer never share
// a bucket. Caps >= 0.
std::vector<GradientBucket> AssignBuckets(const TensorLayout& layout,
                                          int64_t first_cap_bytes,
                                          int64_t cap_bytes);

// The final-record fields of a bucketing strategy's caps (bytes; the cost
// model's bucket count): ring_first_bucket_bytes and ring_bucket_bytes.
nlohmann::json BucketCapsRecord(int64_t first_cap_bytes, int64_t cap_bytes);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GRADIENT_BUCKETS_H_
