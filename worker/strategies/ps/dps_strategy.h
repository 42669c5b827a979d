// DpsStrategy ("dps"): distributed parameter servers (ps-lite / BytePS).
// The flat parameter buffer is cut into K byte-balanced key ranges, one per
// server in SyncOptions::servers (shard order); every worker pushes and
// pulls all ranges to their owners concurrently, and each server applies the
// optimizer to its own range. With SyncOptions::overlap, a chunk is pushed
// as soon as all gradients inside it are final, during backward.
// Not thread-safe (SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_DPS_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_DPS_STRATEGY_H_

#include <memory>

#include "worker/strategies/ps/ps_session.h"
#include "worker/sync_strategy.h"

namespace ringside {

class DpsStrategy : public SyncStrategy {
 public:
  std::string name() const override { return "dps"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
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

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_DPS_STRATEGY_H_
