#include "worker/strategies/allreduce/job_collective.h"

#include "absl/strings/str_cat.h"
#include "collectives/gloo_collective.h"
#include "collectives/nccl_collective.h"
#include "common/status_macros.h"
#include "device/cuda_event.h"

namespace ringside {

absl::StatusOr<Store*> JobStore(const SyncContext& context,
                                std::unique_ptr<InMemoryStore>* own_store) {
  if (context.options.store != nullptr) return context.options.store;
  if (context.world_size > 1) {
    return absl::FailedPreconditionError(
        "all-reduce strategies need the job's rendezvous store "
        "(--master_addr/--master_port or MASTER_ADDR/MASTER_PORT)");
  }
  if (*own_store == nullptr) *own_store = std::make_unique<InMemoryStore>();
  return own_store->get();
}

GlooCollectiveOptions JobGlooOptions(const SyncContext& context,
                                     const std::string& store_prefix) {
  GlooCollectiveOptions options;
  options.host = context.options.transport_host;
  options.algorithm = context.options.allreduce_algorithm;
  options.event_loop = context.options.gloo_event_loop;
  options.connect_timeout = context.options.connect_timeout;
  options.store_prefix = store_prefix;
  return options;
}

absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store) {
  return ConnectCpuGroup(context, store_prefix, context.rank,
                         context.world_size, own_store);
}

absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuGroup(
    const SyncContext& context, const std::string& store_prefix,
    int group_rank, int group_size,
    std::unique_ptr<InMemoryStore>* own_store) {
  RS_ASSIGN_OR_RETURN(Store* const store, JobStore(context, own_store));
  return CreateGlooCollective(*store, group_rank, group_size,
                              JobGlooOptions(context, store_prefix));
}

absl::StatusOr<std::unique_ptr<Collective>> ConnectCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store) {
  if (context.device == Device::kCpu) {
    return ConnectCpuCollective(context, store_prefix, own_store);
  }
  RS_ASSIGN_OR_RETURN(Store* const store, JobStore(context, own_store));
  NcclCollectiveOptions options;
  options.device = context.cuda_device;
  options.connect_timeout = context.options.connect_timeout;
  options.store_prefix = store_prefix;
  return CreateNcclCollective(*store, context.rank, context.world_size,
                              options);
}

absl::Status WaitForGradient(const SyncContext& context, int tensor) {
  if (context.device == Device::kCpu) return absl::OkStatus();
  if (!context.grad_ready_event) {
    return absl::FailedPreconditionError(
        "a CUDA SyncContext needs grad_ready_event");
  }
  return Annotate(WaitForEvent(context.grad_ready_event(tensor)),
                  absl::StrCat("waiting for the gradient of ",
                               context.layout.tensor(tensor).name));
}

}  // namespace ringside
