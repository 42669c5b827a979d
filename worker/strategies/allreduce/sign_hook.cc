#include "worker/strategies/allreduce/sign_hook.h"

#include <utility>

namespace ringside {

SignHook::SignHook(std::string what, SignScale scale)
    : GatherHook(std::move(what)), scale_(scale) {}

// Error feedback, each tensor part's scale and sign bits; the error keeps
// v − s·sign(v) of what was signed.
absl::Span<const float> SignHook::Compress(absl::Span<const float> grads,
                                           int64_t offset) {
  const absl::Span<const float> values = SignedValues(grads, offset);
  BucketState& b = StateOf(grads.size(), offset);
  current_ = &b;
  for (const Piece& p : b.pieces) {
    PackSigns(values.data() + p.begin, p.size, b.error.data() + p.begin,
              b.send.data() + p.word, scale_);
  }
  return b.send;
}

// One rank's s·sign for every tensor part of the bucket Compress made.
void SignHook::Decompress(absl::Span<const float> message,
                          absl::Span<float> bucket) {
  for (const Piece& p : current_->pieces) {
    AddSigns(message.data() + p.word, p.size, bucket.data() + p.begin);
  }
}

std::vector<float>& SignHook::ErrorMemory(int64_t offset, int64_t size) {
  return StateOf(static_cast<size_t>(size), offset).error;
}

SignHook::BucketState& SignHook::StateOf(size_t size, int64_t offset) {
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

std::unique_ptr<BucketCommHook> MakeSignHook() {
  return std::make_unique<SignHook>("sign", SignScale::kMeanAbs);
}

}  // namespace ringside
