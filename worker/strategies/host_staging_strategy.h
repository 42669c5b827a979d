// HostStagingStrategy: runs a host-memory strategy (sps, dps, or any
// strategy that does not take CUDA buffers) for a CUDA worker by staging the
// flat buffers through pinned host memory. It wraps the inner strategy and
// is not registered by name: the CUDA backend (worker/cuda_backend.h) wraps
// every strategy whose SupportsDevice(kCuda) is false.
//
//   OnGradientReady(i)  enqueues on a copy stream of its own: wait for the
//                       model's grad_ready_event(i), copy gradient i device
//                       -> pinned host (cudaMemcpyAsync), record copied[i].
//                       A staging thread waits for copied[i] and then hands
//                       i to the inner strategy, so a parameter-server push
//                       starts while backward still computes earlier layers.
//   FinishStep(t)       waits until every tensor has been handed over, runs
//                       the inner FinishStep (push what is left, pull the
//                       parameters of t+1 into pinned host memory), then
//                       enqueues the host -> device copy of the parameters on
//                       the copy stream and makes the compute stream wait for
//                       it (asynchronous: the next forward orders after it).
//
// The inner strategy sees a kCpu SyncContext over the pinned buffers; its
// calls never overlap (the staging thread's OnGradientReady calls of a step
// happen before FinishStep of that step, under a mutex). Several workers may
// share one GPU. Timeline: per tensor, STAGE_D2H (OnGradientReady until the
// copy is on the host and handed over); on lane "step", PARAMS_H2D (enqueue
// of the parameter copy). Not thread-safe (SyncStrategy contract); owns one
// staging thread. Compiles in every build; without --config=cuda Init fails
// with "built without CUDA".
#ifndef RINGSIDE_WORKER_STRATEGIES_HOST_STAGING_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_HOST_STAGING_STRATEGY_H_

#include <memory>
#include <string>
#include <vector>

#include "device/cuda_event.h"
#include "device/cuda_stream.h"
#include "device/pinned_host_buffer.h"
#include "worker/strategies/comm/comm_queue_thread.h"
#include "worker/sync_strategy.h"

namespace ringside {

class HostStagingStrategy : public SyncStrategy {
 public:
  // `inner` (not owned) must outlive this object.
  explicit HostStagingStrategy(SyncStrategy* inner) : inner_(inner) {}
  ~HostStagingStrategy() override;

  std::string name() const override { return inner_->name(); }
  // Needs context.device == kCuda with compute_stream and grad_ready_event
  // (INVALID_ARGUMENT otherwise). Copies the device parameters to the host,
  // runs the inner Init on the pinned buffers (which may replace the
  // parameters, e.g. rank 0's from the server) and copies them back.
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  int64_t start_step() const override { return inner_->start_step(); }
  absl::Status Abort() override;
  std::string Variant() const override { return inner_->Variant(); }
  nlohmann::json RecordFields() const override {
    return inner_->RecordFields();
  }
  absl::Status Quiesce(int64_t step) override { return inner_->Quiesce(step); }
  int64_t OptimizerStateBytes() const override {
    return inner_->OptimizerStateBytes();
  }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCuda;
  }

 private:
  // Waits for tensor i's copy and hands it to the inner strategy (staging
  // thread).
  absl::Status HandOver(int tensor, double ready_s);
  // Host copy of the parameters finished (before the inner strategy may
  // overwrite the pinned parameters again).
  absl::Status WaitForParamsCopy();
  // Stops the staging thread, waits for the parameters' copy, then ends
  // the inner strategy with `finish` (Shutdown or Abort).
  absl::Status StopThen(absl::Status (SyncStrategy::*finish)());

  SyncStrategy* const inner_;
  SyncContext device_;  // the trainer's context (device pointers)
  SyncContext host_;    // the inner strategy's (pinned host memory)
  PinnedHostBuffer params_, grads_;
  OwnedCudaStream copy_stream_;
  std::vector<OwnedCudaEvent> copied_;  // per tensor
  OwnedCudaEvent params_copied_;
  bool params_copy_pending_ = false;
  std::unique_ptr<CommQueueThread> stage_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_HOST_STAGING_STRATEGY_H_
