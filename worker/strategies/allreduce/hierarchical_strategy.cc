#include "worker/strategies/allreduce/hierarchical_strategy.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/allreduce/local_optimizer.h"

namespace ringside {

HierarchicalStrategy::~HierarchicalStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status HierarchicalStrategy::Init(const SyncContext& context) {
  RS_RETURN_IF_ERROR(context.options.Validate());
  context_ = context;
  RS_ASSIGN_OR_RETURN(
      const HostGrouping hosts,
      GroupIntoHosts(context.options.strategy.Get<HierarchicalOptions>(),
                     context.rank, context.world_size));
  local_size_ = hosts.local_size;
  num_hosts_ = hosts.num_hosts;
  host_ = hosts.host;
  local_rank_ = hosts.local_rank;

  RS_ASSIGN_OR_RETURN(
      local_,
      ConnectCpuGroup(context, absl::StrCat("hierarchical/local/", host_),
                      local_rank_, local_size_, &own_store_));
  if (num_hosts_ > 1) {
    RS_ASSIGN_OR_RETURN(
        cross_, ConnectCpuGroup(
                    context, absl::StrCat("hierarchical/cross/", local_rank_),
                    host_, num_hosts_, &own_store_));
  }
  // Rank 0's parameters (and, resuming, its checkpoint): to every host's
  // local rank 0, then within each host.
  const RootBroadcast across_then_within =
      [this](absl::Span<float> data, absl::Duration timeout) -> absl::Status {
    if (cross_ != nullptr && local_rank_ == 0) {
      RS_RETURN_IF_ERROR(Annotate(cross_->Broadcast(data, 0, timeout),
                                  "across the hosts"));
    }
    return Annotate(local_->Broadcast(data, 0, timeout), "within the host");
  };
  RS_ASSIGN_OR_RETURN(LocalStart start,
                      StartLocal(context_, across_then_within));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;

  const int64_t s = context.layout.total_bytes();
  const int64_t l = local_size_, h = num_hosts_;
  traffic_.bytes_sent = traffic_.bytes_received =
      s * 2 * (l - 1) / l + s * 2 * (h - 1) / (h * l);

  comm_ = BucketCommThread::ForJob(
      &context_.layout, context.options,
      "gradient buckets reduced hierarchically",
      [this](const GradientBucket& bucket, int64_t step) {
        return ReduceBucket(bucket, step);
      });
  return absl::OkStatus();
}

absl::Status HierarchicalStrategy::ReduceBucket(const GradientBucket& bucket,
                                                int64_t step) {
  const bool timed = context_.options.timeline != nullptr;
  absl::Span<float> grads = context_.grads.subspan(bucket.offset, bucket.size);
  const absl::Duration timeout = context_.options.rpc_timeout;
  const std::vector<int64_t> counts = EvenShardCounts(bucket.size, local_size_);
  double start = timed ? NowSeconds() : 0.0;
  comm_->QueueSpans(bucket, start, step, 4);
  auto phase = [&](const char* name) {
    if (!timed) return;
    const double end = NowSeconds();
    comm_->SpanEachTensor(bucket, name, start, end, step, 4);
    start = end;
  };
  RS_RETURN_IF_ERROR(
      Annotate(local_->ReduceScatter(grads, counts, ReduceOp::kSum, timeout),
               "reduce-scatter within the host"));
  phase("LOCAL_REDUCE_SCATTER");
  if (cross_ != nullptr) {
    const int64_t offset = ShardOffset(counts, local_rank_);
    RS_RETURN_IF_ERROR(
        Annotate(cross_->AllReduce(grads.subspan(offset, counts[local_rank_]),
                                   ReduceOp::kSum, timeout),
                 "all-reduce of this rank's shard across hosts"));
    phase("CROSS_ALLREDUCE");
  }
  RS_RETURN_IF_ERROR(Annotate(local_->AllGatherV(grads, counts, timeout),
                              "all-gather within the host"));
  if (context_.world_size > 1) {
    const float scale = 1.0f / static_cast<float>(context_.world_size);
    for (float& g : grads) g *= scale;
  }
  phase("LOCAL_ALLGATHER");
  return absl::OkStatus();
}

void HierarchicalStrategy::OnGradientReady(int tensor_index) {
  comm_->OnGradientReady(tensor_index);
}

absl::StatusOr<StepStats> HierarchicalStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->Step(step));
  stats.bytes_sent = traffic_.bytes_sent;
  stats.bytes_received = traffic_.bytes_received;
  return stats;
}

std::string HierarchicalStrategy::Variant() const {
  return absl::StrCat(num_hosts_, "×", local_size_);
}

absl::Status HierarchicalStrategy::Shutdown() {
  if (comm_ != nullptr) comm_->Stop();
  return absl::OkStatus();
}

RINGSIDE_REGISTER_STRATEGY(
    HierarchicalStrategy,
    StrategyInfo("hierarchical", ServerNeed::kNone)
        .Store()
        .Describe("Horovod's hierarchical all-reduce of gradient buckets "
                  "(ring's): reduce-scatter within a host, all-reduce each "
                  "shard across hosts, all-gather within the host "
                  "(--local_size ranks per host)")
        .Display("Hierarchical")
        .StudyOrder(6)
        .ModelledAs("hierarchical")
        .Options({"local_size", "ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"})
        .VariantStates({"local_size"}));

}  // namespace ringside
