#include "worker/strategies/ring_fp16_strategy.h"

#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce_support.h"

namespace ringside {

RingFp16Strategy::~RingFp16Strategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status RingFp16Strategy::Init(const SyncContext& context) {
  context_ = context;
  RS_ASSIGN_OR_RETURN(collective_,
                      ConnectCpuCollective(context, "ring_fp16", &own_store_));
  Store* store = context.options.store != nullptr ? context.options.store
                                                  : own_store_.get();
  GlooCollectiveOptions options;
  options.host = context.options.transport_host;
  options.algorithm = context.options.allreduce_algorithm;
  options.event_loop = context.options.gloo_event_loop;
  options.connect_timeout = context.options.connect_timeout;
  options.store_prefix = "ring_fp16/half";
  RS_ASSIGN_OR_RETURN(
      half_, GlooHalfAllReduce::Create(*store, context.rank, context.world_size,
                                       options));
  RS_RETURN_IF_ERROR(Annotate(
      collective_->Broadcast(context.params, 0, context.options.rpc_timeout),
      "broadcasting rank 0's initial parameters"));
  RS_ASSIGN_OR_RETURN(
      optimizer_,
      Optimizer::Create(context.optimizer, context.layout.total_elements()));
  halves_.assign(context.layout.total_elements(), 0);
  comm_ = BucketCommThread::ForJob(
      &context_.layout, context.options, "gradient buckets all-reduced in fp16",
      [this](const GradientBucket& bucket, int64_t step) {
        return ReduceBucket(bucket, step);
      });
  return absl::OkStatus();
}

absl::Status RingFp16Strategy::ReduceBucket(const GradientBucket& bucket,
                                            int64_t step) {
  const bool timed = context_.options.timeline != nullptr;
  absl::Span<float> grads = context_.grads.subspan(bucket.offset, bucket.size);
  absl::Span<uint16_t> halves =
      absl::MakeSpan(halves_).subspan(bucket.offset, bucket.size);
  const double t0 = timed ? NowSeconds() : 0.0;
  FloatToHalf(grads, halves);
  const double t1 = timed ? NowSeconds() : 0.0;
  RS_RETURN_IF_ERROR(
      Annotate(half_->AllReduceSum(halves, context_.options.rpc_timeout),
               "fp16 all-reduce"));
  const double t2 = timed ? NowSeconds() : 0.0;
  HalfToFloat(halves, grads);
  if (context_.world_size > 1) {
    const float scale = 1.0f / static_cast<float>(context_.world_size);
    for (float& g : grads) g *= scale;
  }
  if (timed) {
    const double t3 = NowSeconds();
    comm_->QueueSpans(bucket, t0, step, 2);
    comm_->SpanEachTensor(bucket, "COMPRESS", t0, t1, step, 2);
    comm_->SpanEachTensor(bucket, "ALLREDUCE", t1, t2, step, 2);
    comm_->SpanEachTensor(bucket, "DECOMPRESS", t2, t3, step, 2);
  }
  return absl::OkStatus();
}

void RingFp16Strategy::OnGradientReady(int tensor_index) {
  comm_->OnGradientReady(tensor_index);
}

absl::StatusOr<StepStats> RingFp16Strategy::FinishStep(int64_t step) {
  RS_RETURN_IF_ERROR(comm_->WaitForStep(step, context_.options.rpc_timeout));
  StepStats stats = ApplyAveragedGradients(context_, *optimizer_, step);
  // What the fp16 ring moves: 2(N-1)/N of the buffer at 2 bytes/element.
  const int64_t w = context_.world_size;
  stats.bytes_sent = stats.bytes_received =
      context_.layout.total_elements() * 2 * 2 * (w - 1) / w;
  return stats;
}

absl::Status RingFp16Strategy::Shutdown() {
  if (comm_ != nullptr) comm_->Stop();
  return absl::OkStatus();
}

RINGSIDE_REGISTER_STRATEGY(
    RingFp16Strategy,
    StrategyInfo("ring_fp16", ServerNeed::kNone)
        .Store()
        .Describe("ring all-reduce of gradient buckets (ring's) with fp16 "
                  "compression (Horovod's Compression.fp16; Gloo on CPU, 2 "
                  "bytes per element on the wire)")
        .Display("Ring FP16")
        .StudyOrder(7)
        .ModelledAs("ring_fp16")
        .Options({"ring_bucket_kb", "ring_first_bucket_kb",
                  "allreduce_algorithm", "gloo_event_loop"})
        .Tolerance(1e-2));

}  // namespace ringside
