// HalfCompressionHook: ring's bucket hook with 16-bit floats on the wire.
//   fp16 (MakeFp16CompressionHook): Horovod's Compression.fp16, PyTorch
//     DDP's fp16_compress_hook, the GPT-2 study's Apex mixed-precision runs;
//     11 significant bits, magnitudes past 65504 overflow to inf (as with
//     Horovod; no loss scaling here).
//   bf16 (MakeBf16CompressionHook): PyTorch DDP's bf16_compress_hook; 8
//     significant bits, float32's exponent range (no overflow a float32
//     gradient would not have).
// Reduce casts the bucket to the format (round to nearest even),
// sum-all-reduces it with Gloo's ring on 2-byte elements
// (collectives/gloo_half_allreduce.h: rounded to the format after every
// addition, as a 16-bit NCCL ring does), casts the sum back to float32 and
// divides by N. Its own Gloo group connects under "<store_prefix>/half".
// CPU buffers only (the CUDA backend stages such strategies through host
// memory).
//
// Not equivalent to the single-worker reference to float32 rounding: each
// gradient element keeps the format's significant bits.
//
// Phases (timeline): COMPRESS (float -> 16 bits), ALLREDUCE, DECOMPRESS
// (16 bits -> float, / N).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HALF_COMPRESSION_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HALF_COMPRESSION_HOOK_H_

#include <memory>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

std::unique_ptr<BucketCommHook> MakeFp16CompressionHook();
std::unique_ptr<BucketCommHook> MakeBf16CompressionHook();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HALF_COMPRESSION_HOOK_H_
