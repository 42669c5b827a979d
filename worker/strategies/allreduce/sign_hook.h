// SignHook: ring's bucket hook with scaled sign compression and error
// feedback (EF-SignSGD: Karimireddy et al., "Error Feedback Fixes SignSGD
// and other Gradient Compression Schemes", ICML 2019). Per bucket, per
// step, per tensor (its part in the bucket):
//   1. p = the gradients plus the error this rank kept from the last step;
//   2. c = s·sign(p) with s = ‖p‖₁/d (d: the tensor part's elements; sign
//      +1 for p >= 0), sent as d bits and the float s;
//   3. the error kept: p − c.
// One all-gather of every rank's packed bits and scales per bucket; the
// bucket becomes Σ_r s_r·sign_r / N, added in rank order (every rank
// holds the same bits). About 1/32 of ring's float32 bytes plus a float a
// tensor part; TakeWireShare reports the share as topk_hook.h does (an
// all-gather of g words per rank is a ring all-reduce of n·g/2).
// It has no setting that equals the exact strategies (every element keeps
// one bit and its tensor's scale): lossy, and its oracle reports the gap.
// CPU buffers only (the CUDA backend stages such strategies through host
// memory).
//
// State across steps (ExportState, for each rank's checkpoint): every
// bucket's error memory (GatherHook's).
//
// The all-gather, the sum in rank order, the division and the phases are
// GatherHook's (gather_hook.h). Phases (timeline): COMPRESS (error
// feedback, scales, bits), ALLGATHER,
// DECOMPRESS (the scaled signs' sum, error).
//
// SignHook is also the frame of a hook that signs something else made from
// the gradients (onebit_adam_hook.h: Adam's momentum update) or with
// another scale: it overrides SignedValues.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "worker/strategies/allreduce/bucket_comm_hook.h"
#include "worker/strategies/allreduce/gather_hook.h"
#include "worker/strategies/allreduce/gather_kernels.h"

namespace ringside {

// EF-SignSGD: the gradients signed, scaled by their mean magnitude.
std::unique_ptr<BucketCommHook> MakeSignHook();

class SignHook : public GatherHook {
 public:
  // `what` names it in errors; `scale`: the rule of each part's scale.
  SignHook(std::string what, SignScale scale);

 protected:
  // What the bucket at `offset` signs this step, made from its `grads`
  // (valid until the next call); default: the gradients themselves.
  virtual absl::Span<const float> SignedValues(absl::Span<const float> grads,
                                               int64_t offset) {
    return grads;
  }

  absl::Span<const float> Compress(absl::Span<const float> grads,
                                   int64_t offset) final;
  void Decompress(absl::Span<const float> message,
                  absl::Span<float> bucket) final;
  std::vector<float>& ErrorMemory(int64_t offset, int64_t size) final;

 private:
  // One tensor's part of a bucket: [begin, begin + size) of the bucket;
  // its words in the message: the scale, then ⌈size/32⌉ words of bits.
  struct Piece {
    int64_t begin = 0;
    int64_t size = 0;
    int64_t word = 0;  // where its scale sits in the message
  };
  // A bucket's state across steps, keyed by its offset in the flat buffer.
  struct BucketState {
    std::vector<Piece> pieces;
    std::vector<float> error;  // this rank's, the bucket's size
    std::vector<float> send;   // the message, in words
  };
  // The bucket at `offset` of `size` elements: made on its first Reduce.
  BucketState& StateOf(size_t size, int64_t offset);

  const SignScale scale_;
  std::unordered_map<int64_t, BucketState> buckets_;
  const BucketState* current_ = nullptr;  // the bucket being reduced
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_
