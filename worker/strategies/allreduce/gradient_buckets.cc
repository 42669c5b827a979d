#include "worker/strategies/allreduce/gradient_buckets.h"

namespace ringside {

std::vector<GradientBucket> AssignBuckets(const TensorLayout& layout,
                                          int64_t first_cap_bytes,
                                          int64_t cap_bytes) {
  std::vector<GradientBucket> buckets;
  bool open = false;
  for (int t = layout.num_tensors() - 1; t >= 0; --t) {
    const TensorSpec& spec = layout.tensor(t);
    GradientBucket* b = open ? &buckets.back() : nullptr;
    if (b != nullptr && spec.offset + spec.size != b->offset) {
      open = false;  // not adjacent: a new bucket
      b = nullptr;
    }
    if (b == nullptr) {
      buckets.push_back({t, t, spec.offset, 0});
      b = &buckets.back();
      open = true;
    }
    b->first_tensor = t;
    b->offset = spec.offset;
    b->size += spec.size;
    const int64_t cap = buckets.size() == 1 ? first_cap_bytes : cap_bytes;
    if (cap_bytes == 0 || b->size * 4 >= cap) open = false;
  }
  return buckets;
}

nlohmann::json BucketCapsRecord(int64_t first_cap_bytes, int64_t cap_bytes) {
  return {{"ring_bucket_bytes", cap_bytes},
          {"ring_first_bucket_bytes", first_cap_bytes}};
}

}  // namespace ringside
