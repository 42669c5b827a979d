#include "worker/strategies/ps/byteps_strategy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce/bucket_options.h"
#include "worker/strategies/allreduce/hierarchical_options.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/ps/ps_options.h"

namespace ringside {

BytepsStrategy::~BytepsStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status BytepsStrategy::Init(const SyncContext& context) {
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
  if (is_root() && context.options.servers.empty()) {
    return absl::InvalidArgumentError(
        "byteps: no summation servers given (--servers=host:port[,...]; "
        "ps_server --num_workers=<the job's workers>)");
  }

  RS_ASSIGN_OR_RETURN(
      local_, ConnectCpuGroup(context, absl::StrCat("byteps/local/", host_),
                              local_rank_, local_size_, &own_store_));
  // Rank 0's parameters (and, resuming, its checkpoint): to every root,
  // then within each host. The roots' group serves Init only.
  std::unique_ptr<Collective> roots;
  if (num_hosts_ > 1 && is_root()) {
    RS_ASSIGN_OR_RETURN(roots, ConnectCpuGroup(context, "byteps/roots", host_,
                                               num_hosts_, &own_store_));
  }
  const RootBroadcast roots_then_hosts =
      [this, &roots](absl::Span<float> data,
                     absl::Duration timeout) -> absl::Status {
    if (roots != nullptr) {
      RS_RETURN_IF_ERROR(
          Annotate(roots->Broadcast(data, 0, timeout), "to the hosts' roots"));
    }
    return Annotate(local_->Broadcast(data, 0, timeout), "within the host");
  };
  RS_ASSIGN_OR_RETURN(LocalStart start, StartLocal(context_, roots_then_hosts));
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;

  if (is_root()) {
    sums_.assign(context.layout.total_elements(), 0.0f);
    SyncContext pusher = context_;
    pusher.rank = host_;
    pusher.params = absl::MakeSpan(sums_);
    PsSessionJob job;
    job.summation = true;
    job.ranks_per_pusher = local_size_;
    job.start_step = start_step_;
    RS_ASSIGN_OR_RETURN(session_,
                        PsSession::Start(pusher, /*overlap=*/true, job));
  }
  comm_ = BucketCommThread::ForJob(
      &context_.layout, context.options,
      "gradient buckets reduced within the host and pushed",
      [this](const GradientBucket& bucket, int64_t step) {
        return ReduceBucket(bucket, step);
      });
  return absl::OkStatus();
}

absl::Status BytepsStrategy::ReduceBucket(const GradientBucket& bucket,
                                          int64_t step) {
  const bool timed = context_.options.timeline != nullptr;
  const double start = timed ? NowSeconds() : 0.0;
  comm_->QueueSpans(bucket, start, step, 4);
  if (local_size_ > 1) {
    std::vector<int64_t> counts(local_size_, 0);
    counts[0] = bucket.size;  // the root's shard: the whole bucket
    RS_RETURN_IF_ERROR(Annotate(
        local_->ReduceScatter(
            context_.grads.subspan(bucket.offset, bucket.size), counts,
            ReduceOp::kSum, context_.options.rpc_timeout),
        "reduce within the host to its root"));
  }
  if (timed) {
    comm_->SpanEachTensor(bucket, "LOCAL_REDUCE", start, NowSeconds(), step,
                          4);
  }
  if (is_root()) {
    for (int t = bucket.first_tensor; t <= bucket.last_tensor; ++t) {
      session_->OnGradientReady(t);
    }
  }
  return absl::OkStatus();
}

void BytepsStrategy::OnGradientReady(int tensor_index) {
  comm_->OnGradientReady(tensor_index);
}

absl::StatusOr<StepStats> BytepsStrategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  const int64_t bytes = context_.layout.total_bytes();
  StepStats traffic;
  if (is_root()) {
    RS_ASSIGN_OR_RETURN(traffic, session_->FinishStep(step));
    const float scale = 1.0f / static_cast<float>(context_.world_size);
    for (size_t i = 0; i < sums_.size(); ++i) {
      context_.grads[i] = sums_[i] * scale;
    }
  }
  if (local_size_ > 1) {
    const bool timed = context_.options.timeline != nullptr;
    const double start = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(
        Annotate(local_->Broadcast(context_.grads, 0,
                                   context_.options.rpc_timeout),
                 "broadcast of the summed gradients within the host"));
    if (timed) {
      context_.options.timeline->Span("step", "LOCAL_BROADCAST", start,
                                      NowSeconds(),
                                      {{"step", step}, {"bytes", bytes}});
    }
    // A chain's count: every rank but the root sends the buckets once in
    // the reduce and receives them once in the broadcast; the root
    // receives and sends them once.
    traffic.bytes_sent += bytes;
    traffic.bytes_received += bytes;
  }
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->Step(step));
  stats.bytes_sent = traffic.bytes_sent;
  stats.bytes_received = traffic.bytes_received;
  return stats;
}

nlohmann::json BytepsStrategy::RecordFields() const {
  const SyncOptions& options = context_.options;
  const auto& buckets = options.strategy.Get<GradientBucketOptions>();
  nlohmann::json fields =
      BucketCapsRecord(buckets.first_bucket_bytes, buckets.bucket_bytes);
  fields["ps_chunk_bytes"] = options.strategy.Get<PsOptions>().chunk_bytes;
  fields["ps_transport"] = options.strategy.Get<PsOptions>().transport;
  if (session_ != nullptr) fields.update(session_->RecordFields());
  fields["hosts"] = num_hosts_;
  fields["ranks_per_host"] = local_size_;
  return fields;
}

std::string BytepsStrategy::Variant() const {
  return absl::StrCat(num_hosts_, "×", local_size_);
}

absl::Status BytepsStrategy::Abort() {
  if (comm_ != nullptr) comm_->Stop();
  if (session_ != nullptr) session_->Abort();
  return absl::OkStatus();
}

absl::Status BytepsStrategy::Shutdown() {
  if (comm_ != nullptr) comm_->Stop();
  if (session_ != nullptr) return session_->Shutdown();
  return absl::OkStatus();
}

RINGSIDE_REGISTER_STRATEGY(
    BytepsStrategy,
    StrategyInfo("byteps", ServerNeed::kSharded)
        .Store()
        .SummationServers()
        // compare gives every worker a link of its own: the host's reduce
        // and broadcast cross the same link as the push, so the point (a
        // fast link within the host) is not there to show.
        .NotInDefaultSweep()
        .Describe("BytePS's design: gradients reduced within each host "
                  "(--local_size ranks), one copy per host pushed to sharded "
                  "summation servers and the sum pulled back, broadcast "
                  "within the host; every worker applies the optimizer")
        .Display("BytePS")
        .StudyOrder(18)
        .ModelledAs("byteps")
        .Options({"local_size", "chunk_kb", "ps_transport", "ring_bucket_kb",
                  "ring_first_bucket_kb", "gloo_event_loop",
                  "checkpoint_every", "resume"})
        .VariantStates({"local_size"}));

}  // namespace ringside
