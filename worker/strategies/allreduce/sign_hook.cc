#include "worker/strategies/allreduce/sign_hook.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "worker/strategies/allreduce/gather_hook.h"

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
  std::vector<float> send;   // the message, in words
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

class SignHook final : public GatherHook {
 public:
  SignHook() : GatherHook("sign") {}

 protected:
  // Error feedback, each tensor part's scale and sign bits; the error
  // keeps p − s·sign(p).
  absl::Span<const float> Compress(absl::Span<const float> grads,
                                   int64_t offset) override {
    BucketState& b = StateOf(grads.size(), offset);
    current_ = &b;
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
    return b.send;
  }

  // One rank's s·sign for every tensor part of the bucket Compress made.
  void Decompress(absl::Span<const float> message,
                  absl::Span<float> bucket) override {
    for (const Piece& p : current_->pieces) {
      const float scale = message[p.word];
      float* out = bucket.data() + p.begin;
      for (int64_t w = 0; w * 32 < p.size; ++w) {
        const uint32_t bits = FloatAsBits(message[p.word + 1 + w]);
        const int64_t stop = std::min<int64_t>(32, p.size - w * 32);
        for (int64_t j = 0; j < stop; ++j) {
          out[w * 32 + j] += (bits >> j) & 1u ? scale : -scale;
        }
      }
    }
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
         BucketParts(layout(), offset, static_cast<int64_t>(size))) {
      b.pieces.push_back({part.begin, part.size, words});
      words += WordsOf(part.size);
    }
    b.send.assign(words, 0.0f);
    return b;
  }

  std::unordered_map<int64_t, BucketState> buckets_;
  const BucketState* current_ = nullptr;  // the bucket being reduced
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeSignHook() {
  return std::make_unique<SignHook>();
}

}  // namespace ringside
