// TopkHook: ring's bucket hook with top-k sparsification and error
// feedback (Stich et al., "Sparsified SGD with Memory", NeurIPS 2018; the
// selection of Deep Gradient Compression, Lin et al. 2018). Per bucket, per
// step:
//   1. Error feedback: the bucket's gradients plus the error this rank kept
//      from the bucket's last step.
//   2. Per tensor (its part in the bucket), the k = max(1, ⌈ratio·size⌉)
//      elements of largest magnitude (--topk_ratio): their indices within
//      the bucket and their values, packed as pairs (an index travels as
//      the bits of an int32 in a float's slot).
//   3. One all-gather of every rank's pairs (k is the same on every rank:
//      the layout is); the bucket becomes the sum of the ranks' sparse
//      gradients, added in rank order (so every rank holds the same bits),
//      divided by N.
//   4. The error kept: the input less what this rank sent (the elements
//      not selected; the selected ones leave no error).
// At ratio 1 every element is sent, the error stays 0 and the bucket is
// the mean of the ranks' gradients (the oracle's check: it equals ring up
// to the sum's order). Below that it is lossy.
// Wire: an all-gather of 2k floats per rank per bucket; TakeWireShare
// reports it as the share of ring's all-reduce bytes (n·k of the bucket's
// elements: an all-gather of g floats moves (n−1)·g per rank, a ring
// all-reduce of E floats 2(n−1)/n·E). The selection is exact
// (std::nth_element on the magnitudes), O(size) per tensor.
// CPU buffers only (the CUDA backend stages such strategies through host
// memory).
//
// State across steps (ExportState, for each rank's checkpoint): every
// bucket's error memory (GatherHook's).
//
// The all-gather, the sum in rank order, the division and the phases are
// GatherHook's (gather_hook.h). Phases (timeline): COMPRESS (error
// feedback, selection, packing),
// ALLGATHER, DECOMPRESS (the sparse sum).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_HOOK_H_

#include <memory>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

std::unique_ptr<BucketCommHook> MakeTopkHook();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_HOOK_H_
