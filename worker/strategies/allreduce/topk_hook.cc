#include "worker/strategies/allreduce/topk_hook.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
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
  std::vector<float> send;      // 2·k_total: (index bits, value) pairs
  std::vector<float> received;  // N × send
  std::vector<float> magnitude;  // scratch for the selection
};

float IndexAsFloat(int32_t index) {
  float f;
  std::memcpy(&f, &index, sizeof(f));
  return f;
}
int32_t FloatAsIndex(float f) {
  int32_t index;
  std::memcpy(&index, &f, sizeof(index));
  return index;
}

// |v|, a NaN counted as the largest (so the ordering stays strict weak).
float Magnitude(float v) {
  return std::isnan(v) ? std::numeric_limits<float>::infinity()
                       : std::fabs(v);
}

// Appends the k elements of `values` (a piece starting at bucket index
// `begin`) of largest magnitude to `out` as pairs: those above the k-th
// largest magnitude, then those equal to it in index order until k.
void SelectTopK(const float* values, int64_t begin, int64_t size, int64_t k,
                std::vector<float>& magnitude, float* out) {
  int64_t taken = 0;
  auto take = [&](int64_t i) {
    out[2 * taken] = IndexAsFloat(static_cast<int32_t>(begin + i));
    out[2 * taken + 1] = values[i];
    ++taken;
  };
  if (k >= size) {
    for (int64_t i = 0; i < size; ++i) take(i);
    return;
  }
  magnitude.resize(size);
  for (int64_t i = 0; i < size; ++i) magnitude[i] = Magnitude(values[i]);
  std::nth_element(magnitude.begin(), magnitude.begin() + (k - 1),
                   magnitude.end(), std::greater<float>());
  const float threshold = magnitude[k - 1];
  for (int64_t i = 0; i < size && taken < k; ++i) {
    if (Magnitude(values[i]) > threshold) take(i);
  }
  for (int64_t i = 0; i < size && taken < k; ++i) {
    if (Magnitude(values[i]) == threshold) take(i);
  }
}

class TopkHook final : public BucketCommHook {
 public:
  absl::Status Connect(const SyncContext& context, Store&, const std::string&,
                       Collective& collective) override {
    options_ = context.options.strategy.Get<TopkOptions>();
    RS_RETURN_IF_ERROR(options_.Validate());
    world_size_ = context.world_size;
    timeout_ = context.options.rpc_timeout;
    collective_ = &collective;
    layout_ = context.layout;
    if (layout_.total_elements() > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ring_topk: ", layout_.total_elements(),
          " parameters are more than its int32 indices address"));
    }
    return absl::OkStatus();
  }

  absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                      std::vector<HookPhase>* phases) override {
    BucketState& b = StateOf(grads.size(), offset);
    const bool timed = phases != nullptr;
    const double t0 = timed ? NowSeconds() : 0.0;
    for (size_t i = 0; i < grads.size(); ++i) {
      b.error[i] += grads[i];
    }
    float* out = b.send.data();
    for (const Piece& p : b.pieces) {
      SelectTopK(b.error.data() + p.begin, p.begin, p.size, p.k, b.magnitude,
                 out);
      out += 2 * p.k;
    }
    const double t1 = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllGather(b.send, absl::MakeSpan(b.received), timeout_),
        "top-k all-gather"));
    const double t2 = timed ? NowSeconds() : 0.0;
    std::fill(grads.begin(), grads.end(), 0.0f);
    for (size_t j = 0; j < b.received.size(); j += 2) {
      grads[FloatAsIndex(b.received[j])] += b.received[j + 1];
    }
    const float inverse_n = 1.0f / static_cast<float>(world_size_);
    if (world_size_ > 1) {
      for (float& g : grads) g *= inverse_n;
    }
    for (size_t j = 0; j < b.send.size(); j += 2) {
      b.error[FloatAsIndex(b.send[j])] = 0.0f;
    }
    // An all-gather of 2k floats a rank: a ring all-reduce of n·k.
    wire_.Add(static_cast<int64_t>(grads.size()),
              static_cast<double>(world_size_ * b.k_total));
    if (timed) {
      phases->push_back({"COMPRESS", t0, t1});
      phases->push_back({"ALLGATHER", t1, t2});
      phases->push_back({"DECOMPRESS", t2, NowSeconds()});
    }
    return absl::OkStatus();
  }

  int wire_bytes_per_element() const override { return 4; }
  double TakeWireShare() override { return wire_.Take(); }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu;
  }

 private:
  // The bucket at `offset` of `size` elements: made on its first Reduce.
  BucketState& StateOf(size_t size, int64_t offset) {
    auto [it, fresh] = buckets_.try_emplace(offset);
    BucketState& b = it->second;
    if (!fresh) return b;
    b.error.assign(size, 0.0f);
    for (const BucketPart& part :
         BucketParts(layout_, offset, static_cast<int64_t>(size))) {
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
    b.received.assign(2 * b.k_total * world_size_, 0.0f);
    return b;
  }

  TopkOptions options_;
  int world_size_ = 1;
  absl::Duration timeout_;
  Collective* collective_ = nullptr;
  TensorLayout layout_;
  std::unordered_map<int64_t, BucketState> buckets_;
  WireShare wire_;
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeTopkHook() {
  return std::make_unique<TopkHook>();
}

}  // namespace ringside
