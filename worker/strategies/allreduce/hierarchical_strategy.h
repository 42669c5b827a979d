// HierarchicalStrategy ("hierarchical"): Horovod's hierarchical all-reduce
// (HOROVOD_HIERARCHICAL_ALLREDUCE) on Collective groups. The N ranks sit
// on H hosts of L ranks each (L = SyncOptions::local_size, see
// ResolveLocalSize, hierarchical_options.h): host h holds ranks [h*L, (h+1)*L). Per bucket of
// adjacent gradient tensors (ring's buckets, gradient_buckets.h:
// --ring_first_bucket_kb, --ring_bucket_kb; 0: one per tensor; Horovod
// works on its fused buffers alike), as backward makes its last tensor
// final, a communication thread
//   1. reduce-scatters the bucket within the host (LOCAL_REDUCE_SCATTER:
//      local rank l ends with the host's sum of shard l of L, shards as
//      even as the element count allows),
//   2. all-reduces shard l across the hosts among the H ranks of local
//      rank l (CROSS_ALLREDUCE; L groups at once, one per local rank),
//   3. all-gathers the shards within the host (LOCAL_ALLGATHER),
// then divides by N. Every worker applies the optimizer locally; all ranks
// hold bit-identical parameters (each shard is summed once, by its owner's
// cross group, and copied). Across hosts each rank moves only 1/L of the
// bucket, which is the point on hosts with a fast local interconnect.
//
// Groups (Gloo on CPU, through the job's store): "hierarchical/local/<h>"
// (the L ranks of host h) and, with H > 1, "hierarchical/cross/<l>" (the
// H ranks of local rank l). Init broadcasts rank 0's initial parameters
// over cross group 0 to every host's local rank 0, then within each host.
// A group of size 1 moves nothing (L = 1: a flat all-reduce among the H
// hosts; H = 1: reduce-scatter + all-gather, ring's all-reduce).
//
// Traffic (StepStats, per rank, from the algorithms' message sizes for the
// buffer of S bytes): local reduce-scatter and all-gather (L-1)/L*S each
// way each; the cross all-reduce of the S/L shard 2(H-1)/H*S/L each way.
//
// Timeline: per tensor lane QUEUE, then its bucket's LOCAL_REDUCE_SCATTER,
// CROSS_ALLREDUCE (H > 1), LOCAL_ALLGATHER (args: step, the tensor's and
// the bucket's bytes); OPTIMIZER on lane "step".
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/allreduce/hierarchical_options.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/strategies/comm/bucket_comm_thread.h"
#include "worker/sync_strategy.h"

namespace ringside {

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

  int64_t start_step() const override { return start_step_; }
  int local_size() const { return local_size_; }
  int num_hosts() const { return num_hosts_; }

  // Its bucket caps (ring's) and ranks per host.
  nlohmann::json RecordFields() const override {
    const auto& buckets =
        context_.options.strategy.Get<GradientBucketOptions>();
    nlohmann::json fields =
        BucketCapsRecord(buckets.first_bucket_bytes, buckets.bucket_bytes);
    fields["ranks_per_host"] = local_size_;
    return fields;
  }
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
  std::unique_ptr<Collective> cross_;         // H > 1: local rank's H ranks
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;  // > 0 when resumed from a checkpoint
  StepStats traffic_;                       // per step, fixed at Init
  std::unique_ptr<BucketCommThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_HIERARCHICAL_STRATEGY_H_
