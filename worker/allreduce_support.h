// Pieces shared by the strategies that apply the optimizer on every worker
// (baseline, ring, fusion): connecting a CPU (Gloo) collective for the job,
// and the per-step report after every rank has averaged its gradients and
// applied the optimizer locally.
#ifndef RINGSIDE_WORKER_ALLREDUCE_SUPPORT_H_
#define RINGSIDE_WORKER_ALLREDUCE_SUPPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/sync_strategy.h"

namespace ringside {

// Connects a Gloo collective of the job's ranks through
// context.options.store, its keys under `store_prefix`. A single-worker job
// may have no store: *own_store then gets an in-process one (it must outlive
// the collective). FAILED_PRECONDITION when several workers lack a store.
absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store);

// Applies `optimizer` to the averaged gradients and reports the step: the
// optimizer time, and the bytes a ring all-reduce of the whole buffer moves
// out of and into each rank (2(n-1)/n of it).
StepStats ApplyAveragedGradients(const SyncContext& context,
                                 Optimizer& optimizer, int64_t step);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_ALLREDUCE_SUPPORT_H_
