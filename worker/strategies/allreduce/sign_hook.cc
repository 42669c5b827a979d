#include "worker/strategies/allreduce/sign_hook.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

// One tensor's part of a bucket: [begin, begin + size) of the bucket; its
// words in the packed message: the scale, then ⌈size/32⌉ words of bits.
struct Piece {
  int64_t begin = 0;
  int64_t size = 0;
  int64_t word = 0;  // where its scale sits in the message
};

int64_t WordsOf(int64_t size) { return 1 + (size + 31) / 32; }

// A bucket's state across steps, keyed by its offset in the flat buffer.
struct BucketState {
  std::vector<Piece> pieces;
  std::vector<float> error;     // this rank's, the bucket's size
  std::vector<float> send;      // the message, in words
  std::vector<float> received;  // N × send
};

float BitsAsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
uint32_t FloatAsBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

class SignHook final : public BucketCommHook {
 public:
  absl::Status Connect(const SyncContext& context, Store&, const std::string&,
                       Collective& collective) override {
    world_size_ = context.world_size;
    timeout_ = context.options.rpc_timeout;
    collective_ = &collective;
    layout_ = context.layout;
    return absl::OkStatus();
  }

  absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                      std::vector<HookPhase>* phases) override {
    BucketState& b = StateOf(grads.size(), offset);
    const bool timed = phases != nullptr;
    const double t0 = timed ? NowSeconds() : 0.0;
    for (const Piece& p : b.pieces) {
      float* e = b.error.data() + p.begin;
      const float* g = grads.data() + p.begin;
      double l1 = 0;
      for (int64_t i = 0; i < p.size; ++i) {
        e[i] += g[i];
        l1 += std::fabs(e[i]);
      }
      const float scale = static_cast<float>(l1 / static_cast<double>(p.size));
      b.send[p.word] = scale;
      for (int64_t w = 0; w * 32 < p.size; ++w) {
        uint32_t bits = 0;
        const int64_t stop = std::min<int64_t>(32, p.size - w * 32);
        for (int64_t j = 0; j < stop; ++j) {
          float& v = e[w * 32 + j];
          // sign +1 for v >= 0 (bit set), -1 below; the error keeps v − c.
          if (v >= 0) {
            bits |= uint32_t{1} << j;
            v -= scale;
          } else {
            v += scale;
          }
        }
        b.send[p.word + 1 + w] = BitsAsFloat(bits);
      }
    }
    const double t1 = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllGather(b.send, absl::MakeSpan(b.received), timeout_),
        "sign all-gather"));
    const double t2 = timed ? NowSeconds() : 0.0;
    std::fill(grads.begin(), grads.end(), 0.0f);
    const size_t words = b.send.size();
    for (int r = 0; r < world_size_; ++r) {
      const float* message = b.received.data() + r * words;
      for (const Piece& p : b.pieces) {
        const float scale = message[p.word];
        float* out = grads.data() + p.begin;
        for (int64_t w = 0; w * 32 < p.size; ++w) {
          const uint32_t bits = FloatAsBits(message[p.word + 1 + w]);
          const int64_t stop = std::min<int64_t>(32, p.size - w * 32);
          for (int64_t j = 0; j < stop; ++j) {
            out[w * 32 + j] += (bits >> j) & 1u ? scale : -scale;
          }
        }
      }
    }
    if (world_size_ > 1) {
      const float inverse_n = 1.0f / static_cast<float>(world_size_);
      for (float& g : grads) g *= inverse_n;
    }
    // An all-gather of `words` floats a rank: a ring all-reduce of
    // n·words/2.
    wire_.Add(static_cast<int64_t>(grads.size()),
              0.5 * static_cast<double>(world_size_) *
                  static_cast<double>(words));
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
    int64_t words = 0;
    for (const BucketPart& part :
         BucketParts(layout_, offset, static_cast<int64_t>(size))) {
      b.pieces.push_back({part.begin, part.size, words});
      words += WordsOf(part.size);
    }
    b.send.assign(words, 0.0f);
    b.received.assign(words * world_size_, 0.0f);
    return b;
  }

  int world_size_ = 1;
  absl::Duration timeout_;
  Collective* collective_ = nullptr;
  TensorLayout layout_;
  std::unordered_map<int64_t, BucketState> buckets_;
  WireShare wire_;
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeSignHook() {
  return std::make_unique<SignHook>();
}

}  // namespace ringside
