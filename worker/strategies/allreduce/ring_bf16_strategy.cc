#include "worker/strategies/allreduce/ring_bf16_strategy.h"

namespace ringside {

// The cost model predicts it with ring_fp16's formula: the same bytes on
// the wire, and its conversions priced by ring_fp16's calibrated fp16 ones
// (a bf16 conversion is a rounding shift, no dearer per byte).
RINGSIDE_REGISTER_STRATEGY(
    RingBf16Strategy,
    StrategyInfo("ring_bf16", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("ring all-reduce of gradient buckets (ring's) with bf16 "
                  "compression (PyTorch DDP's bf16_compress_hook; Gloo on "
                  "CPU, 2 bytes per element on the wire; lossy)")
        .Display("Ring BF16")
        .StudyOrder(12)
        .ModelledAs("ring_fp16")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"})
        .Updates("lossy (bf16 gradients)")
        .Tolerance(1e-2));

}  // namespace ringside
