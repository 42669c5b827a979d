#include "worker/allreduce_support.h"

#include "absl/strings/str_cat.h"
#include "collectives/gloo_collective.h"
#include "collectives/nccl_collective.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "models/cuda/cuda_optimizer.h"
#include "worker/cuda_support.h"

namespace ringside {
namespace {

// The store of a job: the job's own, or for a single worker an in-process
// one kept in *own_store.
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

void FillStats(const SyncContext& context, double optimizer_s,
               StepStats* stats) {
  stats->local_optimizer_s = optimizer_s;
  const int w = context.world_size;
  stats->bytes_sent = stats->bytes_received =
      context.layout.total_bytes() * 2 * (w - 1) / w;
}

class HostLocalOptimizer final : public LocalOptimizer {
 public:
  HostLocalOptimizer(const SyncContext& context,
                     std::unique_ptr<Optimizer> optimizer)
      : context_(context), optimizer_(std::move(optimizer)) {}
  absl::StatusOr<StepStats> Step(int64_t step) override {
    return ApplyAveragedGradients(context_, *optimizer_, step);
  }

 private:
  const SyncContext& context_;
  std::unique_ptr<Optimizer> optimizer_;
};

// Apply on the compute stream between two timing events, then waits for
// the second: the next forward (same stream) sees the new parameters.
class CudaLocalOptimizer final : public LocalOptimizer {
 public:
  static absl::StatusOr<std::unique_ptr<LocalOptimizer>> Create(
      const SyncContext& context) {
    auto o = std::unique_ptr<CudaLocalOptimizer>(new CudaLocalOptimizer(context));
    RS_ASSIGN_OR_RETURN(
        o->optimizer_,
        CudaOptimizer::Create(context.optimizer,
                              context.layout.total_elements(),
                              context.cuda_device));
    RS_ASSIGN_OR_RETURN(o->start_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    RS_ASSIGN_OR_RETURN(o->stop_,
                        OwnedCudaEvent::Create(context.cuda_device, true));
    return std::unique_ptr<LocalOptimizer>(std::move(o));
  }

  absl::StatusOr<StepStats> Step(int64_t step) override {
    const double start = NowSeconds();
    CudaStream stream = context_.compute_stream;
    RS_RETURN_IF_ERROR(RecordEvent(start_.get(), stream));
    RS_RETURN_IF_ERROR(optimizer_->Apply(
        0, context_.params.data(), context_.grads.data(),
        context_.layout.total_elements(), step + 1, stream));
    RS_RETURN_IF_ERROR(RecordEvent(stop_.get(), stream));
    RS_RETURN_IF_ERROR(WaitForEvent(stop_.get()));
    RS_ASSIGN_OR_RETURN(const double device_s,
                        EventSeconds(start_.get(), stop_.get()));
    RecordSpan(context_.options.timeline, "step", "OPTIMIZER", start,
               NowSeconds(), {{"step", step}});
    StepStats stats;
    FillStats(context_, device_s, &stats);
    return stats;
  }

 private:
  explicit CudaLocalOptimizer(const SyncContext& context)
      : context_(context) {}
  const SyncContext& context_;
  std::unique_ptr<CudaOptimizer> optimizer_;
  OwnedCudaEvent start_, stop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store) {
  RS_ASSIGN_OR_RETURN(Store* const store, JobStore(context, own_store));
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
  FillStats(context, end - start, &stats);
  return stats;
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

absl::StatusOr<std::unique_ptr<LocalOptimizer>> LocalOptimizer::Create(
    const SyncContext& context) {
  if (context.device == Device::kCuda) {
    return CudaLocalOptimizer::Create(context);
  }
  RS_ASSIGN_OR_RETURN(
      std::unique_ptr<Optimizer> optimizer,
      Optimizer::Create(context.optimizer, context.layout.total_elements()));
  return std::unique_ptr<LocalOptimizer>(
      new HostLocalOptimizer(context, std::move(optimizer)));
}

}  // namespace ringside
