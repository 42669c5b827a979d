#include "worker/strategies/allreduce/ring_topk_strategy.h"

#include "worker/strategies/allreduce/topk_options.h"

namespace ringside {

RINGSIDE_REGISTER_STRATEGY(
    RingTopkStrategy,
    StrategyInfo("ring_topk", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("ring's gradient buckets with top-k sparsification and "
                  "error feedback (Stich et al. 2018: 1% of each tensor's "
                  "elements, --topk_ratio; indices and values all-gathered; "
                  "Gloo on CPU; lossy)")
        .Display("Ring Top-k")
        .StudyOrder(15)
        .ModelledAs("ring_topk")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop", "topk_ratio",
                  "compression_start_step", "checkpoint_every", "resume"})
        .VariantStates({"compression_start_step"})
        .Updates("lossy (top-k sparsified)")
        .Tolerance(1e-2)
        // Compression off: every element sent.
        .OracleOptions([](StrategyOptionSet& set) {
          TopkOptions all;
          all.ratio = 1.0;
          set.Set(all);
        }));

}  // namespace ringside
