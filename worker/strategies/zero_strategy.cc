#include "worker/strategies/zero_strategy.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

std::string ZeroStrategy::name() const { return absl::StrCat("zero", stage_); }

absl::Status ZeroStrategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(ShardedStart start, StartSharded(context_, name()));
  own_store_ = std::move(start.own_store);
  collective_ = std::move(start.collective);
  optimizer_ = std::move(start.optimizer);
  start_step_ = start.start_step;
  step_ = start_step_;
  if (stage_ == 2) {
    shards_ = std::make_unique<TensorShards>(
        context_.layout, optimizer_->counts(), context_.rank);
    if (context_.device == Device::kCpu) {
      for (int t = 0; t < context_.layout.num_tensors(); ++t) {
        shards_->Release(context_.grads, t);
      }
    }
    grad_bytes_ = optimizer_->shard().size() * 4;
    peak_grad_bytes_ = grad_bytes_;
    buckets_ = AssignBuckets(context_.layout,
                             context_.options.ring_first_bucket_bytes,
                             context_.options.ring_bucket_bytes);
    bucket_of_.assign(context_.layout.num_tensors(), 0);
    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor;
           ++t) {
        bucket_of_[t] = static_cast<int>(b);
      }
    }
    bucket_ready_.assign(buckets_.size(), 0);
    comm_ = std::make_unique<SequencedCommThread>();
  }
  return absl::OkStatus();
}

ZeroStrategy::~ZeroStrategy() {
  if (comm_ != nullptr) comm_->Stop();
}

void ZeroStrategy::OnGradientReady(int tensor) {
  if (stage_ != 2 || comm_ == nullptr) return;
  const int b = bucket_of_[tensor];
  const GradientBucket& bucket = buckets_[b];
  if (++bucket_ready_[b] < bucket.num_tensors()) return;
  bucket_ready_[b] = 0;
  const KeyRange range{bucket.offset, bucket.offset + bucket.size};
  const int64_t outside = context_.device == Device::kCpu
                              ? shards_->OutsideBytes(range)
                              : 0;
  peak_grad_bytes_ = std::max(peak_grad_bytes_, grad_bytes_ += outside);
  reduced_bytes_ += ShardedPhaseBytes(bucket.size * 4, context_.world_size);
  const int64_t step = step_;
  const int first = bucket.first_tensor, last = bucket.last_tensor;
  comm_->Enqueue([this, first, last, step, outside]() {
    RS_RETURN_IF_ERROR(ReduceScatterGradients(context_, *collective_,
                                              *shards_, first, last, step));
    grad_bytes_ -= outside;
    return absl::OkStatus();
  });
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
  int64_t gradient_bytes = 0;
  if (stage_ == 1) {
    // An all-reduce moves 2(n-1)/n of the buffer each way.
    const double start = NowSeconds();
    // CUDA: every gradient final before the NCCL group's stream reads them.
    for (int t = 0; t < context_.layout.num_tensors(); ++t) {
      RS_RETURN_IF_ERROR(WaitForGradient(context_, t));
    }
    RS_RETURN_IF_ERROR(Annotate(
        collective_->AllReduce(context_.grads, ReduceOp::kAverage, timeout),
        absl::StrCat("all-reduce of the gradients of step ", step)));
    RecordWholeBufferSpans(context_, "ALLREDUCE", start, NowSeconds(), step);
    gradient_bytes = 2 * ShardedPhaseBytes(context_.layout.total_bytes(),
                                           context_.world_size);
  } else {
    if (comm_ == nullptr) {
      return absl::FailedPreconditionError("zero2: FinishStep before Init");
    }
    RS_RETURN_IF_ERROR(comm_->WaitAll(
        timeout,
        absl::StrCat("the gradients' reduce-scatters of step ", step)));
    gradient_bytes = reduced_bytes_;
    reduced_bytes_ = 0;
    step_ = step + 1;
  }
  // The all-gather adds (n-1)/n of the buffer (StepAndGather's stats).
  RS_ASSIGN_OR_RETURN(StepStats stats, optimizer_->StepAndGather(step));
  RS_RETURN_IF_ERROR(optimizer_->MaybeCheckpoint(step));
  stats.bytes_sent += gradient_bytes;
  stats.bytes_received += gradient_bytes;
  return stats;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero1Strategy,
    StrategyInfo("zero1", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 1: all-reduce the gradients, each rank steps "
                  "the optimizer on its byte-balanced shard only (1/N of the "
                  "optimizer state), all-gather the parameters (Gloo on CPU, NCCL "
                  "on CUDA)")
        .Display("ZeRO-1")
        .StudyOrder(8)
        .ModelledAs("zero1")
        .Options({"allreduce_algorithm", "checkpoint_every", "resume"}));

RINGSIDE_REGISTER_STRATEGY(
    Zero2Strategy,
    StrategyInfo("zero2", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 2: reduce-scatter the gradients in DDP's "
                  "buckets as backward completes them (each rank keeps only "
                  "its shard's; on CPU the rest is given back), step the "
                  "optimizer on that shard only, all-gather the parameters "
                  "(Gloo on CPU, NCCL on CUDA)")
        .Display("ZeRO-2")
        .StudyOrder(9)
        .ModelledAs("zero2")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb", "checkpoint_every",
                  "resume"}));

}  // namespace ringside
