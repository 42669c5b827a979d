// AsyncPsStrategy ("async_ps"): stale synchronous parallel (SSP, Ho et al.
// 2013) on the parameter servers, with bounded staleness tau =
// SyncOptions::staleness (--staleness).
//
// The servers are unchanged: they still aggregate synchronously (version
// v+1 = optimizer step of version v with the average of every worker's
// step-v gradient, server/param_shard.h). What changes is when a worker may
// go on: the push of step t's gradient and the pull of version t+1 run on a
// background thread (a PsSession over K >= 1 servers, overlap off), and
// FinishStep(t) only waits until some version >= t+1-tau has arrived, then
// installs the newest one it has. So a worker at step t computes with
// parameters of version >= t - tau (the SSP bound: every update of steps
// < t - tau from every worker is in them) and runs up to tau steps ahead of
// the slowest worker instead of waiting for every round trip. tau = 0 waits
// for version t+1 exactly: the same gradients and server arithmetic as sps,
// so the same parameters bit for bit (tests/worker/async_ps_strategy_test).
//
// The background thread pushes step s only after version s arrived, so the
// server's BSP rule (a chunk accepts step-s pushes at version s) always
// holds and no version is pulled after it is gone. At most tau + 1
// gradient copies wait for it.
//
// Before a mid-run evaluation (Quiesce) the rounds in flight finish, so that
// the trainer's measured time, which leaves the evaluation out, counts them:
// without it, up to tau rounds ran free during each evaluation (measured: 1.4x
// the throughput at eval_every = 5, tau = 2, against no evaluation).
//
// Shutdown drains: every queued gradient is pushed, the final version
// (all updates) is pulled into context.params, then the servers are told
// this worker is done. Every rank thus ends with the same parameters.
//
// Reports: StepStats bytes are those the background completed since the
// previous FinishStep (a push of the whole buffer and a pull of it per
// step), so they lag by up to tau steps. Timeline: PsSession's PUSH/PULL
// (per tensor) and shard lanes from the background thread; WAIT_PARAMS on
// lane "step" while FinishStep waits (args: step, version installed,
// staleness = step + 1 - version).
//
// Utilization, throughput and eval loss against tau:
//   bazel run //experiments/bench:staleness_sweep -- --staleness=0,1,2,4
//
// Not thread-safe (SyncStrategy contract); owns one background thread that
// alone uses the PsSession after Init.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_STRATEGY_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "worker/strategies/ps/ps_session.h"
#include "worker/sync_strategy.h"

namespace ringside {

class AsyncPsStrategy : public SyncStrategy {
 public:
  ~AsyncPsStrategy() override;
  std::string name() const override { return "async_ps"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  // Stops the rounds' thread and abandons the session's step, without
  // draining the rounds or telling the servers.
  absl::Status Abort() override;
  // Waits until version step+1 arrived (every round so far done) without
  // installing it: the rounds' time counts before a mid-run evaluation's
  // pause, not during it. Timeline: DRAIN on lane "step".
  absl::Status Quiesce(int64_t step) override;
  // "τ=<staleness bound>".
  std::string Variant() const override;
  // The chunk and the staleness bound τ.
  nlohmann::json RecordFields() const override;

  // The parameter version each step's gradient was computed on (index =
  // step); step - versions_used()[step] <= tau. Training thread only.
  const std::vector<int64_t>& versions_used() const { return versions_used_; }

 private:
  struct Pending {
    int64_t step = 0;
    std::vector<float> grads;
  };

  void CommLoop();
  void StopThread();
  // Waits until a version >= `version` has arrived (or an error), bounded
  // by `timeout`. Training thread.
  absl::Status WaitForVersion(int64_t version, absl::Duration timeout,
                              const char* what);
  // Copies the newest arrived version into context_.params if it is newer
  // than the one there. Training thread.
  void InstallLatest();

  SyncContext context_;
  int staleness_ = 0;
  // The buffer the next round pulls into; after the round it trades places
  // with latest_ (background thread only after Init). Each round pushes its
  // Pending::grads where they lie.
  std::vector<float> comm_params_;
  std::unique_ptr<PsSession> session_;
  std::thread comm_thread_;

  // Training thread only.
  int64_t have_version_ = 0;  // version in context_.params
  std::vector<int64_t> versions_used_;

  absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<float>> free_ ABSL_GUARDED_BY(mu_);
  std::vector<float> latest_ ABSL_GUARDED_BY(mu_);
  int64_t latest_version_ ABSL_GUARDED_BY(mu_) = 0;
  StepStats traffic_ ABSL_GUARDED_BY(mu_);  // completed, not yet reported
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_STRATEGY_H_
