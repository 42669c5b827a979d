// HierarchicalStrategy ("hierarchical"): Horovod's hierarchical all-reduce
// on Collective groups. The N ranks sit on H hosts of L ranks each (L =
// SyncOptions::local_size, see ResolveLocalSize): host h holds ranks
// [h*L, (h+1)*L), its local rank 0 is the host's leader. Per bucket of
// adjacent gradient tensors (ring's buckets, gradient_buckets.h:
// --ring_first_bucket_kb, --ring_bucket_kb; 0: one per tensor; Horovod's
// hierarchical all-reduce works on its fused buffers alike), as backward
// makes its last tensor final, a communication thread
//   1. reduces it within the host (LOCAL_REDUCE: a sum all-reduce of the
//      local group; Collective has no rooted reduce, and the leader is the
//      one that goes on with the host's sum),
//   2. all-reduces the host sums across hosts among the leaders
//      (CROSS_ALLREDUCE, the cross group, leaders only),
//   3. broadcasts the global sum from the leader within the host
//      (LOCAL_BROADCAST),
// then divides by N. Every worker applies the optimizer locally; all ranks
// hold bit-identical parameters. Only the leaders talk across hosts, once
// per bucket, which is the point on hosts with a fast local interconnect.
//
// Groups (Gloo on CPU, through the job's store): "hierarchical/local/<h>"
// (L ranks) and "hierarchical/cross" (H leaders). Init broadcasts rank 0's
// initial parameters the same way (cross, then local). A group of size 1
// moves nothing (L = 1: every rank is its host's leader; H = 1: the cross
// step is a no-op).
//
// Traffic (StepStats, per rank, from the algorithms' message sizes for the
// buffer of S bytes): local ring all-reduce 2(L-1)/L*S each way; leaders
// also 2(H-1)/H*S each way across hosts; Gloo's binomial-tree broadcast:
// S received by every non-leader, S sent per child in the tree.
//
// Timeline: per tensor lane QUEUE, then its bucket's LOCAL_REDUCE,
// CROSS_ALLREDUCE (leaders), LOCAL_BROADCAST (args: step, the tensor's and
// the bucket's bytes); OPTIMIZER on lane "step".
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_HIERARCHICAL_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_HIERARCHICAL_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "models/optimizer.h"
#include "worker/strategies/bucket_comm_thread.h"
#include "worker/sync_strategy.h"

namespace ringside {

// Returns getenv(name) or nullptr.
using GetEnvFn = std::function<const char*(const char* name)>;

// Ranks per host for a job of `world_size` ranks: `flag_local_size` when >
// 0; otherwise the first launcher variable that is set, LOCAL_WORLD_SIZE
// (torchrun), OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI), SLURM_NTASKS_PER_NODE
// (SLURM); otherwise world_size (every rank on one host). INVALID_ARGUMENT,
// naming where the value came from, when it is negative, not an integer,
// larger than world_size or does not divide it (every host must hold the
// same number of ranks). Thread-safe if `get_env` is.
absl::StatusOr<int> ResolveLocalSize(int flag_local_size, int world_size,
                                     const GetEnvFn& get_env);

class HierarchicalStrategy : public SyncStrategy {
 public:
  ~HierarchicalStrategy() override;
  std::string name() const override { return "hierarchical"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  // "<hosts>×<ranks per host>", e.g. "2×4".
  std::string Variant() const override;

  int local_size() const { return local_size_; }
  int num_hosts() const { return num_hosts_; }

  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }

 private:
  // The three phases for `bucket` (comm thread).
  absl::Status ReduceBucket(const GradientBucket& bucket, int64_t step);

  SyncContext context_;
  int local_size_ = 1;  // L
  int num_hosts_ = 1;   // H
  int host_ = 0;
  int local_rank_ = 0;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> local_;         // this host's L ranks
  std::unique_ptr<Collective> cross_;         // leaders only: H ranks
  std::unique_ptr<Optimizer> optimizer_;
  StepStats traffic_;                       // per step, fixed at Init
  std::unique_ptr<BucketCommThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_HIERARCHICAL_STRATEGY_H_
