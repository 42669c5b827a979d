#include "worker/strategies/allreduce/ring_sign_strategy.h"

namespace ringside {

RINGSIDE_REGISTER_STRATEGY(
    RingSignStrategy,
    StrategyInfo("ring_sign", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("ring's gradient buckets with scaled sign compression and "
                  "error feedback (EF-SignSGD, Karimireddy et al. 2019: one "
                  "bit per element and an L1 scale per tensor, "
                  "all-gathered; Gloo on CPU; lossy, no exact setting)")
        .Display("Ring Sign")
        .StudyOrder(16)
        .ModelledAs("ring_sign")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "compression_start_step", "checkpoint_every", "resume"})
        .VariantStates({"compression_start_step"})
        .Updates("lossy (sign, 1 bit)")
        .NoExactSetting());

}  // namespace ringside
