// SpsStrategy ("sps"): a single parameter server over gRPC — the
// torch.nn.DataParallel picture. After backward, every worker pushes its
// whole gradient to the one server, which averages the N gradients, steps
// the optimizer and serves the new parameters, which every worker pulls.
// Requires exactly one server in SyncOptions::servers. Not thread-safe
// (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_SPS_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_SPS_STRATEGY_H_

#include <memory>

#include "worker/strategies/ps/ps_session.h"
#include "worker/sync_strategy.h"

namespace ringside {

class SpsStrategy : public SyncStrategy {
 public:
  std::string name() const override { return "sps"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  int64_t start_step() const override { return session_->start_step(); }
  absl::Status Shutdown() override;
  absl::Status Abort() override {
    if (session_ != nullptr) session_->Abort();
    return absl::OkStatus();
  }
  nlohmann::json RecordFields() const override {
    return session_ == nullptr ? nlohmann::json::object()
                               : session_->RecordFields();
  }

 private:
  std::unique_ptr<PsSession> session_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_SPS_STRATEGY_H_
