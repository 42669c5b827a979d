#include "worker/strategies/allreduce/topk_hook.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/strategies/allreduce/gather_hook.h"
#include "worker/strategies/allreduce/gather_kernels.h"
#include "worker/strategies/allreduce/topk_options.h"

namespace ringside {
namespace {

// One tensor's part of a bucket: [begin, begin + size) of the bucket, and
// the k elements it sends.
struct Piece {
  int64_t begin = 0;
  int64_t size = 0;
  int64_t k = 0;
};

// A bucket's state across steps, keyed by its offset in the flat buffer.
struct BucketState {
  std::vector<Piece> pieces;
  int64_t k_total = 0;
  // This rank's error, the bucket's size; during a Reduce, the input (the
  // gradients plus the error) until the sent elements are taken from it.
  std::vector<float> error;
  std::vector<float> send;       // 2·k_total: (index bits, value) pairs
  std::vector<float> magnitude;  // scratch for the selection
};

class TopkHook final : public GatherHook {
 public:
  TopkHook() : GatherHook("top-k") {}

 protected:
  absl::Status Configure(const SyncContext& context) override {
    options_ = context.options.strategy.Get<TopkOptions>();
    RS_RETURN_IF_ERROR(options_.Validate());
    if (layout().total_elements() > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ring_topk: ", layout().total_elements(),
          " parameters are more than its int32 indices address"));
    }
    return absl::OkStatus();
  }

  // Error feedback, each tensor part's top k as pairs; the elements sent
  // leave no error.
  absl::Span<const float> Compress(absl::Span<const float> grads,
                                   int64_t offset) override {
    BucketState& b = StateOf(grads.size(), offset);
    for (size_t i = 0; i < grads.size(); ++i) {
      b.error[i] += grads[i];
    }
    float* out = b.send.data();
    for (const Piece& p : b.pieces) {
      SelectTopK(b.error.data() + p.begin, p.begin, p.size, p.k, b.magnitude,
                 out);
      out += 2 * p.k;
    }
    for (size_t j = 0; j < b.send.size(); j += 2) {
      b.error[FloatAsIndex(b.send[j])] = 0.0f;
    }
    return b.send;
  }

  void Decompress(absl::Span<const float> message,
                  absl::Span<float> bucket) override {
    for (size_t j = 0; j < message.size(); j += 2) {
      bucket[FloatAsIndex(message[j])] += message[j + 1];
    }
  }

  std::vector<float>& ErrorMemory(int64_t offset, int64_t size) override {
    return StateOf(static_cast<size_t>(size), offset).error;
  }

 private:
  // The bucket at `offset` of `size` elements: made on its first Reduce.
  BucketState& StateOf(size_t size, int64_t offset) {
    auto [it, fresh] = buckets_.try_emplace(offset);
    BucketState& b = it->second;
    if (!fresh) return b;
    b.error.assign(size, 0.0f);
    for (const BucketPart& part :
         BucketParts(layout(), offset, static_cast<int64_t>(size))) {
      Piece p;
      p.begin = part.begin;
      p.size = part.size;
      p.k = std::min<int64_t>(
          p.size, std::max<int64_t>(
                      1, static_cast<int64_t>(std::ceil(
                             options_.ratio * static_cast<double>(p.size)))));
      b.k_total += p.k;
      b.pieces.push_back(p);
    }
    b.send.assign(2 * b.k_total, 0.0f);
    return b;
  }

  TopkOptions options_;
  std::unordered_map<int64_t, BucketState> buckets_;
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeTopkHook() {
  return std::make_unique<TopkHook>();
}

}  // namespace ringside
