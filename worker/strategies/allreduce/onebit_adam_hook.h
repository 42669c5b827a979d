// OneBitAdamHook: ring's bucket hook for 1-bit Adam (Tang et al., ICML
// 2021; DeepSpeed's OnebitAdam), which compresses Adam's momentum rather
// than the gradient. For each bucket's first --compression_start_step
// steps (1-bit Adam's freeze_step) it averages the gradients with a plain
// float32 all-reduce, and the ranks apply Adam. After that, per bucket, per
// step, per tensor (its part in the bucket):
//   1. u = β1·m + (1 − β1)·(g + wd·p), this rank's momentum update from the
//      momentum m every rank holds alike (`momentum`, the optimizer's) and
//      its own gradients g;
//   2. u plus the error this rank kept, compressed to s·sign with s its
//      root mean square (DeepSpeed's scale), sent as one bit an element and
//      the float s; the error keeps the rest;
//   3. one all-gather of every rank's bits and scales; the bucket becomes
//      Σ_r s_r·sign_r / N, every rank's the same bits: the averaged
//      momentum, which OneBitAdamOptimizer takes as m (its variance frozen).
// DeepSpeed's compressed_allreduce instead has each rank reduce one chunk
// of everyone's signs and compress the chunk's average again (a "server"
// error) before an all-gather: 2·d/32 bits a rank at any N. Here every rank
// decompresses every rank's signs, so the average needs no second
// compression (nor its error) and a rank moves N·d/32 bits: the same bytes
// at N = 2, more above.
// The packing and the error memory are SignHook's (sign_hook.h), the
// all-gather, bytes and phases GatherHook's (gather_hook.h): about 1/32 of
// ring's float32. CPU buffers only (the CUDA backend stages such
// strategies through host memory).
//
// State across steps (ExportState): GatherHook's step counts and every
// bucket's error memory; the momentum itself is the optimizer's (rank 0's
// checkpoint).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_HOOK_H_

#include <functional>
#include <memory>

#include "absl/types/span.h"
#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

// `momentum` returns the optimizer's m over the whole flat buffer (valid
// from the first Reduce on; read on the communication thread while
// backward runs, written only by the optimizer after every bucket is done).
std::unique_ptr<BucketCommHook> MakeOneBitAdamHook(
    std::function<absl::Span<const float>()> momentum);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_ONEBIT_ADAM_HOOK_H_
