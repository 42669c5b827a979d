#include "worker/strategies/allreduce/ring_onebit_adam_strategy.h"

#include <utility>

#include "common/status_macros.h"
#include "worker/strategies/allreduce/compression_start_options.h"
#include "worker/strategies/allreduce/onebit_adam_hook.h"

namespace ringside {

RingOneBitAdamStrategy::RingOneBitAdamStrategy()
    : RingStrategy("ring_onebit_adam",
                   MakeOneBitAdamHook([this] { return rule_->MomentumState(); })) {}

absl::StatusOr<std::unique_ptr<LocalOptimizer>>
RingOneBitAdamStrategy::MakeOptimizer(const SyncContext& context) {
  if (context.device != Device::kCpu) {
    return absl::InvalidArgumentError(
        "ring_onebit_adam applies its optimizer on host buffers only (CUDA "
        "workers stage it through host memory)");
  }
  const int64_t freeze_steps =
      context.options.strategy.Get<CompressionStartOptions>().start_step;
  RS_ASSIGN_OR_RETURN(
      std::unique_ptr<OneBitAdamOptimizer> rule,
      OneBitAdamOptimizer::Create(context.optimizer,
                                  context.layout.total_elements(),
                                  freeze_steps));
  rule_ = rule.get();
  return LocalOptimizer::OnHost(context, std::move(rule));
}

RINGSIDE_REGISTER_STRATEGY(
    RingOneBitAdamStrategy,
    StrategyInfo("ring_onebit_adam", ServerNeed::kNone)
        .Store()
        .NotInDefaultSweep()
        .Describe("1-bit Adam (Tang et al. 2021, DeepSpeed's OnebitAdam) on "
                  "ring's gradient buckets: plain Adam for "
                  "--compression_start_step steps (its freeze_step), then "
                  "each rank's momentum as one bit an element and an RMS "
                  "scale a tensor, with error feedback, all-gathered, and "
                  "the variance frozen; needs --optimizer=adam; Gloo on "
                  "CPU; lossy)")
        .Display("Ring 1-bit Adam")
        .StudyOrder(17)
        .ModelledAs("ring_onebit_adam")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "compression_start_step", "checkpoint_every", "resume"})
        // A study's setting: the warm-up DeepSpeed's tutorial recommends,
        // 15-25% of the run's steps (the paper's BERT runs froze at about
        // 15%); 16 steps, a fifth of the slow_link preset's 80.
        .StudyFlags({"--compression_start_step=16"})
        .VariantStates({"compression_start_step"})
        .Updates("lossy (1-bit Adam: momentum signs)")
        .OracleOptimizer("adam")
        // Compression off: the warm-up never ends, ring with Adam.
        .OracleOptions([](StrategyOptionSet& set) {
          CompressionStartOptions never;
          never.start_step = int64_t{1} << 40;
          set.Set(never);
        }));

}  // namespace ringside
