#include "worker/allreduce_support.h"

#include "collectives/gloo_collective.h"
#include "common/stopwatch.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store) {
  Store* store = context.options.store;
  if (store == nullptr) {
    if (context.world_size > 1) {
      return absl::FailedPreconditionError(
          "all-reduce strategies need the job's rendezvous store "
          "(--master_addr/--master_port or MASTER_ADDR/MASTER_PORT)");
    }
    if (*own_store == nullptr) *own_store = std::make_unique<InMemoryStore>();
    store = own_store->get();
  }
  GlooCollectiveOptions options;
  options.host = context.options.transport_host;
  options.algorithm = context.options.allreduce_algorithm;
  options.connect_timeout = context.options.connect_timeout;
  options.store_prefix = store_prefix;
  return CreateGlooCollective(*store, context.rank, context.world_size,
                              options);
}

StepStats ApplyAveragedGradients(const SyncContext& context,
                                 Optimizer& optimizer, int64_t step) {
  const double start = NowSeconds();
  optimizer.Apply(0, context.params, context.grads, step + 1);
  const double end = NowSeconds();
  RecordSpan(context.options.timeline, "step", "OPTIMIZER", start, end,
             {{"step", step}});
  StepStats stats;
  stats.local_optimizer_s = end - start;
  const int w = context.world_size;
  stats.bytes_sent = stats.bytes_received =
      context.layout.total_bytes() * 2 * (w - 1) / w;
  return stats;
}

}  // namespace ringside
