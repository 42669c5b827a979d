// PowerSgdHook: ring's bucket hook with PowerSGD's low-rank compression
// (Vogels et al., NeurIPS 2019), as PyTorch DDP's powerSGD_hook runs it.
// Per bucket, per step:
//   1. For its first --powersgd_start_step steps, a plain float32 average
//      all-reduce (ring's).
//   2. Error feedback: the bucket's gradients plus the error this rank kept
//      from the bucket's last step; that sum is remembered as the input.
//   3. Each tensor of 2+ dimensions seen as a matrix M (rows = its first
//      dimension, cols = the rest, row-major as in the flat buffer) whose
//      rows·cols >= min_compression_rate · r·(rows + cols) is compressed;
//      the others (biases, norms, small matrices) are not. A matrix's rank
//      is min(r, rows, cols), as PyTorch clamps it.
//   4. P = M·Q for every compressed matrix (Q: cols × r, from the last step
//      with warm start, else seeded random; the same on every rank); one
//      sum all-reduce of the uncompressed tensors and every P, packed;
//      the uncompressed ones divided by N; each P orthonormalized as
//      PyTorch does (Householder QR for r > 2, Gram-Schmidt for r <= 2,
//      where a column left with under 1e-6 of its norm, the gradients
//      spanning fewer dimensions, is zero).
//   5. Q = Mᵀ·P, one average all-reduce of every Q, packed; M ≈ P·Qᵀ
//      written back into the bucket.
//   6. The error kept for the next step: the input less what was written
//      (PyTorch's: the local input less the averaged result, so the
//      uncompressed tensors' error is this rank's gradient less the mean).
// At full rank (r >= min(rows, cols), and --powersgd_min_compression_rate=0
// so that such matrices are compressed at all) every matrix's P spans the
// column space of the mean, so P·Qᵀ is the mean up to rounding and the
// run equals ring's (the oracle's check).
// Two float32 all-reduces per bucket carry r·(rows + cols) elements per
// compressed matrix instead of rows·cols; TakeWireShare reports that share.
// CPU buffers only (the CUDA backend stages such strategies through host
// memory). Not equivalent to ring below full rank: lossy.
//
// State across steps (ExportState, for each rank's checkpoint): per bucket
// its step count, error memory and every compressed matrix's Q.
//
// Phases (timeline): COMPRESS (error feedback, P = M·Q), ALLREDUCE_P,
// ORTHOGONALIZE (and Q = Mᵀ·P), ALLREDUCE_Q, DECOMPRESS (P·Qᵀ, error).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_HOOK_H_

#include <memory>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

std::unique_ptr<BucketCommHook> MakePowerSgdHook();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_HOOK_H_
