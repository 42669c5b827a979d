#include "worker/strategies/allreduce/ring_fp16_strategy.h"

namespace ringside {

RINGSIDE_REGISTER_STRATEGY(
    RingFp16Strategy,
    StrategyInfo("ring_fp16", ServerNeed::kNone)
        .Store()
        .Describe("ring all-reduce of gradient buckets (ring's) with fp16 "
                  "compression (Horovod's Compression.fp16; Gloo on CPU, 2 "
                  "bytes per element on the wire)")
        .Display("Ring FP16")
        .StudyOrder(7)
        .ModelledAs("ring_fp16")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"})
        .Tolerance(1e-2));

}  // namespace ringside
