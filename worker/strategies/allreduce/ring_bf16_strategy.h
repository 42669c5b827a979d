// RingBf16Strategy ("ring_bf16"): ring (ring_strategy.h: its buckets,
// overlap with backward, local optimizer and checkpoints) with bf16 on the
// wire (half_compression_hook.h: PyTorch DDP's bf16_compress_hook). The
// bucket caps --ring_first_bucket_kb and --ring_bucket_kb count float32
// bytes, so a 25 MiB bucket is 12.5 MiB on the wire.
//
// Against ring_fp16: the same bytes, 8 significant bits instead of 11, and
// float32's exponent range, so a large gradient never overflows and a tiny
// one never flushes to zero where fp16 would. It declares an oracle
// tolerance of 1e-2 (relative L2 error of the parameters), as ring_fp16
// does: the oracle's 8-step MLP lands at 0.8e-4 to 2.4e-4 with SGD and up
// to 3.0e-3 with Adam at N = 4, about 8x ring_fp16's (2^3: three fewer
// significant bits).
//
// Traffic: StepStats bytes are a ring all-reduce's 2(N-1)/N of the buffer
// in 2-byte elements, half of ring's. Ring's float32 Gloo group (store
// prefix "ring_bf16") broadcasts rank 0's initial parameters and carries
// checkpoint resumption; the bf16 group uses "ring_bf16/half".
// Timeline: as ring_fp16's (QUEUE, COMPRESS, ALLREDUCE, DECOMPRESS per
// tensor lane; OPTIMIZER on lane "step").
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_BF16_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_BF16_STRATEGY_H_

#include "worker/strategies/allreduce/half_compression_hook.h"
#include "worker/strategies/allreduce/ring_strategy.h"

namespace ringside {

class RingBf16Strategy final : public RingStrategy {
 public:
  RingBf16Strategy() : RingStrategy("ring_bf16", MakeBf16CompressionHook()) {}
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_RING_BF16_STRATEGY_H_
