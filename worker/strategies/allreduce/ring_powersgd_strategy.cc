#include "worker/strategies/allreduce/ring_powersgd_strategy.h"

#include "worker/strategies/allreduce/powersgd_options.h"

namespace ringside {

RINGSIDE_REGISTER_STRATEGY(
    RingPowerSgdStrategy,
    StrategyInfo("ring_powersgd", ServerNeed::kNone)
        .Store()
        .Describe("ring all-reduce of gradient buckets (ring's) with "
                  "PowerSGD low-rank compression and error feedback "
                  "(Vogels et al. 2019; PyTorch DDP's powerSGD_hook; rank "
                  "2, warm start; Gloo on CPU; lossy)")
        .Display("Ring PowerSGD")
        .StudyOrder(11)
        .ModelledAs("ring_powersgd")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop", "powersgd_rank",
                  "powersgd_start_step", "powersgd_min_compression_rate",
                  "powersgd_warm_start", "checkpoint_every", "resume"})
        .Updates("lossy (PowerSGD, low rank)")
        .Tolerance(1e-2)
        // Compression off: every matrix at full rank (its rank clamped to
        // min(rows, cols)), where P·Qᵀ is the mean.
        .OracleOptions([](StrategyOptionSet& set) {
          PowerSgdOptions full;
          full.rank = 1 << 20;
          full.min_compression_rate = 0;
          set.Set(full);
        }));

}  // namespace ringside
