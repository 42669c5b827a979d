// RingFp16Strategy ("ring_fp16"): ring all-reduce of the gradients with
// fp16 compression (Horovod's Compression.fp16; the GPT-2 study's Apex
// mixed-precision runs), in ring's buckets of adjacent tensors
// (gradient_buckets.h; the caps --ring_first_bucket_kb and --ring_bucket_kb
// count float32 bytes, so a 25 MiB bucket is 12.5 MiB on the wire; 0: one
// bucket per tensor). As backward makes a bucket's last tensor final, the
// communication thread casts the bucket to binary16, sum-all-reduces the
// halves with Gloo's ring on 2-byte elements
// (collectives/gloo_half_allreduce.h: fp16 on the wire, rounded to fp16 after
// every addition as an fp16 NCCL ring does), casts the sum back to float32 and
// divides by N. Every worker then applies the optimizer locally; all ranks hold
// bit-identical parameters.
//
// Not equivalent to the single-worker reference to float32 rounding: each
// gradient element loses all but 11 significant bits, and magnitudes past
// 65504 overflow to inf (as with Horovod; no loss scaling here). It declares
// an oracle tolerance of 1e-2 (relative L2 error of the parameters). The
// oracle's 8-step MLP lands near 3e-5 with SGD; Adam, which divides each
// update by the gradient's running RMS, turns the rounding of tiny
// gradients into larger relative changes (1.1e-3 on charlm).
//
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of the buffer
// in fp16, i.e. half of ring's. Init also connects a float32 Gloo group
// (store prefix "ring_fp16") for the broadcast of rank 0's initial
// parameters; the fp16 group uses "ring_fp16/half".
//
// Why buckets: one collective call costs the same few thread wake-ups
// whatever its size; per tensor, at 4 ranks on 2 cores, 158 calls of
// mobilenet_v2 took about 0.8 ms per ring step each.
//
// Timeline (SyncOptions::timeline): per tensor lane QUEUE, then its
// bucket's COMPRESS (float -> fp16), ALLREDUCE and DECOMPRESS (fp16 ->
// float, / N) (args: step, the tensor's and the bucket's bytes on the
// wire); OPTIMIZER on lane "step".
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_RING_FP16_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_RING_FP16_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/collective.h"
#include "collectives/gloo_half_allreduce.h"
#include "collectives/in_memory_store.h"
#include "models/optimizer.h"
#include "worker/strategies/bucket_comm_thread.h"
#include "worker/sync_strategy.h"

namespace ringside {

class RingFp16Strategy : public SyncStrategy {
 public:
  ~RingFp16Strategy() override;
  std::string name() const override { return "ring_fp16"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  // Compress, all-reduce, decompress `bucket` (comm thread).
  absl::Status ReduceBucket(const GradientBucket& bucket, int64_t step);

  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;    // float32: initial broadcast
  std::unique_ptr<GlooHalfAllReduce> half_;   // comm thread only
  std::vector<uint16_t> halves_;              // fp16 image of the grads
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<BucketCommThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_RING_FP16_STRATEGY_H_
