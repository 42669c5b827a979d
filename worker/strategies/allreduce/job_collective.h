// How a strategy gets the job's collectives: the job's rendezvous store and
// Gloo options, a Gloo collective of the job's ranks or of a subgroup, the
// job's collective for gradients on its device (Gloo or NCCL), and waiting
// for a gradient to be final before communicating it.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_JOB_COLLECTIVE_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_JOB_COLLECTIVE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "collectives/gloo_collective.h"
#include "collectives/in_memory_store.h"
#include "worker/sync_strategy.h"

namespace ringside {

// The job's rendezvous store (context.options.store), or for a single
// worker without one an in-process store kept in *own_store (it must
// outlive its users). FAILED_PRECONDITION when several workers lack one.
absl::StatusOr<Store*> JobStore(const SyncContext& context,
                                std::unique_ptr<InMemoryStore>* own_store);

// The Gloo options of the job's CPU collectives: its transport host,
// all-reduce algorithm, event loop and connect timeout, keys under
// `store_prefix`.
GlooCollectiveOptions JobGlooOptions(const SyncContext& context,
                                     const std::string& store_prefix);

// Connects a Gloo collective of the job's ranks through
// context.options.store, its keys under `store_prefix`. A single-worker job
// may have no store: *own_store then gets an in-process one (it must outlive
// the collective). FAILED_PRECONDITION when several workers lack a store.
absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store);

// The same for a subgroup of the job (e.g. the ranks of one host): this
// rank is `group_rank` of `group_size`; every member uses the same
// `store_prefix`, distinct per group.
absl::StatusOr<std::unique_ptr<Collective>> ConnectCpuGroup(
    const SyncContext& context, const std::string& store_prefix,
    int group_rank, int group_size, std::unique_ptr<InMemoryStore>* own_store);

// The job's collective for gradients on context.device: on kCpu
// ConnectCpuCollective; on kCuda an NCCL group on context.cuda_device
// (through the same store, keys under `store_prefix`), which needs a
// distinct GPU per rank (FAILED_PRECONDITION "NCCL needs a distinct GPU per
// rank ..." otherwise). Blocking, bounded by options.connect_timeout.
absl::StatusOr<std::unique_ptr<Collective>> ConnectCollective(
    const SyncContext& context, const std::string& store_prefix,
    std::unique_ptr<InMemoryStore>* own_store);

// Blocks until gradient `tensor` of the current step is final: on kCuda
// waits on the host for context.grad_ready_event(tensor); on kCpu returns
// at once (it was final when OnGradientReady ran).
absl::Status WaitForGradient(const SyncContext& context, int tensor);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_JOB_COLLECTIVE_H_
