#include "worker/strategies/allreduce/ring_powersgd_strategy.h"

#include "worker/strategies/allreduce/powersgd_options.h"

namespace ringside {

RINGSIDE_REGISTER_STRATEGY(
    RingPowerSgdStrategy,
    StrategyInfo("ring_powersgd", ServerNeed::kNone)
        .Store()
        .Describe("ring all-reduce of gradient buckets (ring's) with "
                  "PowerSGD low-rank compression and error feedback "
                  "(Vogels et al. 2019; PyTorch DDP's powerSGD_hook; warm "
                  "start; rank 2 by default, the paper's image setting; "
                  "Gloo on CPU; lossy)")
        .Display("Ring PowerSGD")
        .StudyOrder(11)
        .ModelledAs("ring_powersgd")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop", "powersgd_rank",
                  "powersgd_start_step", "powersgd_min_compression_rate",
                  "powersgd_warm_start", "checkpoint_every", "resume"})
        // A study's setting, for language models: rank 4, as the paper
        // ran its LSTM on WikiText-2 (Vogels et al. 2019, §5), after plain
        // all-reduce steps first, as PyTorch's powerSGD_hook defers
        // compression (start_powerSGD_iter, its default 1000 steps: early
        // training is the most sensitive to inaccurate gradients); 8
        // steps, a tenth of the slow_link preset's 80.
        .StudyFlags({"--powersgd_rank=4", "--powersgd_start_step=8"})
        .VariantStates({"powersgd_rank", "powersgd_start_step"})
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
