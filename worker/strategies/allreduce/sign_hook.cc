#include "worker/strategies/allreduce/sign_hook.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "worker/strategies/allreduce/gather_hook.h"
#include "worker/strategies/allreduce/gather_kernels.h"

namespace ringside {
namespace {

// One tensor's part of a bucket: [begin, begin + size) of the bucket; its
// words in the packed message: the scale, then ⌈size/32⌉ words of bits.
struct Piece {
  int64_t begin = 0;
  int64_t size = 0;
  int64_t word = 0;  // where its scale sits in the message
};

// A bucket's state across steps, keyed by its offset in the flat buffer.
struct BucketState {
  std::vector<Piece> pieces;
  std::vector<float> error;     // this rank's, the bucket's size
  std::vector<float> send;   // the message, in words
};

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
      PackSigns(grads.data() + p.begin, p.size, b.error.data() + p.begin,
                b.send.data() + p.word);
    }
    return b.send;
  }

  // One rank's s·sign for every tensor part of the bucket Compress made.
  void Decompress(absl::Span<const float> message,
                  absl::Span<float> bucket) override {
    for (const Piece& p : current_->pieces) {
      AddSigns(message.data() + p.word, p.size, bucket.data() + p.begin);
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
    int64_t words = 0;
    for (const BucketPart& part :
         BucketParts(layout(), offset, static_cast<int64_t>(size))) {
      b.pieces.push_back({part.begin, part.size, words});
      words += SignWords(part.size);
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
