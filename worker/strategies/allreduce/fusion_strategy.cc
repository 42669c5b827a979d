#include "worker/strategies/allreduce/fusion_strategy.h"

#include <utility>

#include "collectives/fusion/fusion_flags.h"
#include "collectives/fusion/fusion_options.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/strategies/allreduce/device_fusion_memory.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/allreduce/local_optimizer.h"

namespace ringside {

FusionStrategy::~FusionStrategy() { runtime_.reset(); }

absl::Status FusionStrategy::Init(const SyncContext& context) {
  context_ = context;
  const FusionOptions& fusion = context.options.strategy.Get<FusionOptions>();
  RS_RETURN_IF_ERROR(fusion.Validate());
  RS_ASSIGN_OR_RETURN(control_,
                      ConnectCpuCollective(context, "fusion_ctl", &own_store_));
  RS_ASSIGN_OR_RETURN(data_,
                      ConnectCollective(context, "fusion_data", &own_store_));
  RS_ASSIGN_OR_RETURN(LocalStart start, StartLocal(context_, data_.get()));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  if (context.device == Device::kCuda) {
    RS_ASSIGN_OR_RETURN(memory_, DeviceFusionMemory::Create(context_));
  } else if (fusion.overlap_batches && context.world_size > 1) {
    RS_ASSIGN_OR_RETURN(
        overlap_data_,
        ConnectCpuCollective(context, "fusion_data2", &own_store_));
  }
  FusionOptions options = fusion;
  options.timeline = context.options.timeline;
  options.timeout = context.options.rpc_timeout;
  RS_ASSIGN_OR_RETURN(
      runtime_, FusionRuntime::Start(control_.get(), data_.get(),
                                     context.layout, context.grads, options,
                                     memory_.get(), overlap_data_.get()));
  return absl::OkStatus();
}

void FusionStrategy::OnGradientReady(int tensor_index) {
  runtime_->Enqueue(tensor_index);
}

absl::StatusOr<StepStats> FusionStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(runtime_->WaitForReduced(context_.layout.num_tensors(),
                                              context_.options.rpc_timeout));
  return optimizer_->Step(step);
}

absl::Status FusionStrategy::Shutdown() {
  if (runtime_ == nullptr) return absl::OkStatus();
  return runtime_->Shutdown();
}

FusionStats FusionStrategy::stats() const {
  return runtime_ ? runtime_->stats() : FusionStats();
}

// The fusion runtime's flags (collectives/fusion/fusion_flags.h) fill its
// FusionOptions in SyncOptions::strategy.
RINGSIDE_REGISTER_OPTION_FLAGS(FusionOptions, FusionOptionsFromFlags);

RINGSIDE_REGISTER_STRATEGY(
    FusionStrategy,
    StrategyInfo("fusion", ServerNeed::kNone)
        .Store()
        .Describe("Horovod-style runtime: background negotiation with rank "
                  "0, response cache, fused all-reduces (Gloo on CPU, NCCL "
                  "on CUDA), overlapped with backward")
        .Display("Fusion")
        .StudyOrder(4)
        .ModelledAs("fusion")
        .Options({"cycle_time_ms", "fusion_threshold_bytes", "fusion_in_place",
                  "fusion_overlap_batches", "response_cache_capacity",
                  "stall_warning_s", "allreduce_algorithm",
                  "gloo_event_loop", "checkpoint_every", "resume"}));

}  // namespace ringside
