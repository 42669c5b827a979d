// Fp16CompressionHook: ring's bucket hook with fp16 on the wire (Horovod's
// Compression.fp16, PyTorch DDP's fp16_compress_hook; the GPT-2 study's
// Apex mixed-precision runs). Reduce casts the bucket to binary16,
// sum-all-reduces the halves with Gloo's ring on 2-byte elements
// (collectives/gloo_half_allreduce.h: rounded to fp16 after every addition,
// as an fp16 NCCL ring does), casts the sum back to float32 and divides by
// N. Its own Gloo group connects under "<store_prefix>/half". CPU buffers
// only (the CUDA backend stages such strategies through host memory).
//
// Not equivalent to the single-worker reference to float32 rounding: each
// gradient element keeps 11 significant bits, and magnitudes past 65504
// overflow to inf (as with Horovod; no loss scaling here).
//
// Phases (timeline): COMPRESS (float -> fp16), ALLREDUCE, DECOMPRESS
// (fp16 -> float, / N).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FP16_COMPRESSION_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FP16_COMPRESSION_HOOK_H_

#include <memory>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

std::unique_ptr<BucketCommHook> MakeFp16CompressionHook();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_FP16_COMPRESSION_HOOK_H_
