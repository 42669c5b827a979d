#include "worker/strategies/sharded/zero_strategy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/sharded/zero_options.h"

namespace ringside {

std::string ZeroStrategy::name() const { return absl::StrCat("zero", stage_); }

absl::Status ZeroStrategy::Init(const SyncContext& context) {
  context_ = context;
  // Stage 2 shards each bucket (a unit) evenly, unless contiguous; stage 1
  // the whole buffer, byte-balanced.
  std::vector<KeyRange> units;
  if (stage_ == 2) {
    const auto& caps = context_.options.strategy.Get<GradientBucketOptions>();
    buckets_ = AssignBuckets(context_.layout, caps.first_bucket_bytes,
                             caps.bucket_bytes);
    for (const GradientBucket& b : buckets_) {
      units.push_back(KeyRange{b.offset, b.offset + b.size});
    }
  }
  RS_ASSIGN_OR_RETURN(
      ShardPlan plan,
      ZeroShardPlan(context_.layout, std::move(units), context_.world_size,
                    stage_ == 2 &&
                        context_.options.strategy.Get<ZeroOptions>().per_unit()));
  RS_ASSIGN_OR_RETURN(sharded_,
                      StartSharded(context_, name(), std::move(plan)));
  step_ = sharded_.start_step;
  if (stage_ == 2) {
    bucket_of_.assign(context_.layout.num_tensors(), 0);
    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor;
           ++t) {
        bucket_of_[t] = static_cast<int>(b);
      }
    }
    bucket_ready_.assign(buckets_.size(), 0);
    comm_ = std::make_unique<SequencedCommThread>();
    gradients_ = std::make_unique<ShardedGradients>(
        context_, *sharded_.collective, sharded_.optimizer->shards(), *comm_);
  }
  return absl::OkStatus();
}

nlohmann::json ZeroStrategy::RecordFields() const {
  if (stage_ != 2) return nlohmann::json::object();
  const auto& buckets = context_.options.strategy.Get<GradientBucketOptions>();
  return BucketCapsRecord(buckets.first_bucket_bytes, buckets.bucket_bytes);
}

ZeroStrategy::~ZeroStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

void ZeroStrategy::OnGradientReady(int tensor) {
  if (gradients_ == nullptr) return;  // stage 1, or before Init
  const int b = bucket_of_[tensor];
  if (++bucket_ready_[b] < buckets_[b].num_tensors()) return;
  bucket_ready_[b] = 0;
  gradients_->Reduce(buckets_[b].first_tensor, buckets_[b].last_tensor, step_);
}

absl::Status ZeroStrategy::Shutdown() {
  if (comm_ == nullptr) return absl::OkStatus();
  absl::Status s = comm_->WaitAll(context_.options.rpc_timeout,
                                  "the last gradients' reduce-scatters");
  comm_->Stop();
  comm_.reset();
  return s;
}

absl::StatusOr<StepStats> ZeroStrategy::FinishStep(int64_t step) {
  const absl::Duration timeout = context_.options.rpc_timeout;
  int64_t gradient_bytes = 0, gradient_critical = 0;
  if (stage_ == 1) {
    // An all-reduce moves 2(n-1)/n of the buffer each way.
    const double start = NowSeconds();
    // CUDA: every gradient final before the NCCL group's stream reads them.
    for (int t = 0; t < context_.layout.num_tensors(); ++t) {
      RS_RETURN_IF_ERROR(WaitForGradient(context_, t));
    }
    RS_RETURN_IF_ERROR(Annotate(
        sharded_.collective->AllReduce(context_.grads, ReduceOp::kAverage,
                                       timeout),
        absl::StrCat("all-reduce of the gradients of step ", step)));
    RecordWholeBufferSpans(context_, "ALLREDUCE", start, NowSeconds(), step);
    gradient_bytes = 2 * ShardedPhaseBytes(context_.layout.total_bytes(),
                                           context_.world_size);
    gradient_critical = gradient_bytes;  // the ring's equal chunks
  } else {
    if (comm_ == nullptr) {
      return absl::FailedPreconditionError("zero2: FinishStep before Init");
    }
    RS_RETURN_IF_ERROR(comm_->WaitAll(
        timeout,
        absl::StrCat("the gradients' reduce-scatters of step ", step)));
    gradient_bytes = gradients_->TakeStepBytes(&gradient_critical);
    step_ = step + 1;
  }
  // The all-gather adds (n-1)/n of the buffer (StepAndGather's stats).
  RS_ASSIGN_OR_RETURN(StepStats stats,
                      sharded_.optimizer->StepAndGather(step));
  RS_RETURN_IF_ERROR(sharded_.optimizer->MaybeCheckpoint(step));
  stats.bytes_sent += gradient_bytes;
  stats.bytes_received += gradient_bytes;
  stats.ring_critical_bytes += gradient_critical;
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero1Strategy,
    StrategyInfo("zero1", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 1: all-reduce the gradients, each rank steps "
                  "the optimizer on its byte-balanced shard only (1/N of the "
                  "optimizer state, DeepSpeed's contiguous partition), "
                  "all-gather the parameters (Gloo on CPU, NCCL on CUDA)")
        .Display("ZeRO-1")
        .StudyOrder(8)
        .ModelledAs("zero1")
        .Options({"allreduce_algorithm", "gloo_event_loop",
                  "checkpoint_every", "resume"}));

RINGSIDE_REGISTER_STRATEGY(
    Zero2Strategy,
    StrategyInfo("zero2", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 2: reduce-scatter the gradients in DDP's "
                  "buckets as backward completes them, each bucket cut "
                  "evenly across the ranks (FSDP's SHARD_GRAD_OP; "
                  "--zero_layout=contiguous: DeepSpeed's byte-balanced "
                  "shards of the whole buffer); each rank keeps only its "
                  "pieces of the gradients (on CPU the rest is given back), "
                  "steps the optimizer on them, all-gathers the parameters "
                  "bucket by bucket (Gloo on CPU, NCCL on CUDA)")
        .Display("ZeRO-2")
        .StudyOrder(9)
        .ModelledAs("zero2")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb", "zero_layout",
                  "gloo_event_loop", "checkpoint_every", "resume"}));

}  // namespace ringside
