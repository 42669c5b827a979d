#include "worker/strategies/ps/local_ps_worker.h"

#include "common/status_macros.h"

namespace ringside {

LocalPsWorker::LocalPsWorker(const TensorLayout& layout)
    : params_(layout.total_elements(), 0.01f),
      grads_(layout.total_elements(), 0.001f) {}

absl::StatusOr<std::unique_ptr<LocalPsWorker>> LocalPsWorker::Start(
    const TensorLayout& layout, int rank, int world_size,
    const SyncOptions& options, const OptimizerConfig& optimizer) {
  std::unique_ptr<LocalPsWorker> worker(new LocalPsWorker(layout));
  SyncContext context;
  context.rank = rank;
  context.world_size = world_size;
  context.layout = layout;
  context.params = absl::MakeSpan(worker->params_);
  context.grads = absl::MakeSpan(worker->grads_);
  context.optimizer = optimizer;
  context.options = options;
  RS_ASSIGN_OR_RETURN(worker->session_,
                      PsSession::Start(context, /*overlap=*/false));
  return worker;
}

}  // namespace ringside
