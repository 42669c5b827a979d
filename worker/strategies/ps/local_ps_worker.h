// LocalPsWorker: one worker's PsSession over parameter and gradient
// buffers of its own (parameters 0.01, gradients 0.001, every element),
// for benchmarks that run workers as threads against in-process servers
// (server/local_ps_cluster.h): the calibration's rounds and transport_bench.
//
// Start blocks as PsSession::Start does (bounded by options'
// connect_timeout and rpc_timeout). Thread-compatible: one thread drives
// one worker.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_LOCAL_PS_WORKER_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_LOCAL_PS_WORKER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_layout.h"
#include "worker/strategies/ps/ps_session.h"
#include "worker/sync_strategy.h"

namespace ringside {

class LocalPsWorker {
 public:
  // Rank `rank` of `world_size` workers of `layout`'s tensors against
  // options.servers, the servers applying `optimizer`; PsSession::Start's
  // error otherwise.
  static absl::StatusOr<std::unique_ptr<LocalPsWorker>> Start(
      const TensorLayout& layout, int rank, int world_size,
      const SyncOptions& options, const OptimizerConfig& optimizer);

  // The session: FinishStep(t) pushes the gradients and pulls version t+1
  // into the parameters; Shutdown() at the end.
  PsSession& session() { return *session_; }

 private:
  LocalPsWorker(const TensorLayout& layout);

  std::vector<float> params_, grads_;
  std::unique_ptr<PsSession> session_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_LOCAL_PS_WORKER_H_
