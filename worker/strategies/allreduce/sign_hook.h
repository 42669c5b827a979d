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
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_

#include <memory>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

std::unique_ptr<BucketCommHook> MakeSignHook();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_SIGN_HOOK_H_
