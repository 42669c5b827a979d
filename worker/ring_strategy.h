// RingStrategy ("ring"): ring all-reduce of each gradient tensor — Gloo on
// CPU workers, NCCL on CUDA workers (device buffers; the communication
// thread waits for each tensor's ready event on the host, then NCCL reduces
// it on its own stream while backward goes on; one GPU per rank). Init
// connects the collective through the job's store and broadcasts rank 0's
// initial parameters. During backward, each tensor is queued as soon as it is final
// and a communication thread all-reduces (averages) it in place while the
// model computes the earlier layers; FinishStep waits for the queue and then
// every worker applies the optimizer locally, so all ranks hold
// bit-identical parameters.
// Timeline (SyncOptions::timeline, when set): per tensor, on a lane named
// after it, QUEUE (OnGradientReady to the start of its all-reduce) and
// ALLREDUCE (args of both: step, bytes); the local optimizer as OPTIMIZER
// on lane "step". With no timeline the clock is not read.
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_RING_STRATEGY_H_
#define RINGSIDE_WORKER_RING_STRATEGY_H_

#include <deque>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/allreduce_support.h"
#include "worker/sync_strategy.h"

namespace ringside {

class RingStrategy : public SyncStrategy {
 public:
  ~RingStrategy() override;
  std::string name() const override { return "ring"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return start_step_; }
  absl::Status Shutdown() override;
  bool SupportsDevice(Device) const override { return true; }

 private:
  // A tensor waiting for the communication thread.
  struct Queued {
    int tensor = 0;
    int64_t step = 0;
    double ready_s = 0.0;  // NowSeconds() at OnGradientReady; timeline only
  };

  void CommLoop();
  void StopThread();

  SyncContext context_;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from a checkpoint
  std::thread comm_thread_;

  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  int reduced_ ABSL_GUARDED_BY(mu_) = 0;   // tensors done this step
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;  // the step being reduced
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_RING_STRATEGY_H_
