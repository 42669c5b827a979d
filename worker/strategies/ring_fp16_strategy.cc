#include "worker/strategies/ring_fp16_strategy.h"

#include "absl/strings/str_cat.h"
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
  comm_ = StartPerTensorCommThread(
      &context_.layout, context_.options.timeline,
      [this](int tensor, int64_t step) { return ReduceTensor(tensor, step); });
  return absl::OkStatus();
}

absl::Status RingFp16Strategy::ReduceTensor(int tensor, int64_t step) {
  Timeline* const timeline = context_.options.timeline;
  const TensorSpec& spec = context_.layout.tensor(tensor);
  absl::Span<float> grads = context_.layout.View(tensor, context_.grads);
  absl::Span<uint16_t> halves =
      absl::MakeSpan(halves_).subspan(spec.offset, spec.size);
  const double t0 = timeline ? NowSeconds() : 0.0;
  FloatToHalf(grads, halves);
  const double t1 = timeline ? NowSeconds() : 0.0;
  RS_RETURN_IF_ERROR(half_->AllReduceSum(halves, context_.options.rpc_timeout));
  const double t2 = timeline ? NowSeconds() : 0.0;
  HalfToFloat(halves, grads);
  if (context_.world_size > 1) {
    const float scale = 1.0f / static_cast<float>(context_.world_size);
    for (float& g : grads) g *= scale;
  }
  if (timeline != nullptr) {
    const double t3 = NowSeconds();
    const nlohmann::json args = {{"step", step}, {"bytes", spec.size * 2}};
    timeline->Span(spec.name, "COMPRESS", t0, t1, args);
    timeline->Span(spec.name, "ALLREDUCE", t1, t2, args);
    timeline->Span(spec.name, "DECOMPRESS", t2, t3, args);
  }
  return absl::OkStatus();
}

void RingFp16Strategy::OnGradientReady(int tensor_index) {
  comm_->Enqueue(tensor_index);
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
        .Describe("ring all-reduce per gradient tensor with fp16 "
                  "compression (Gloo on CPU, 2 bytes per element on the "
                  "wire)")
        .Display("Ring FP16")
        .StudyOrder(7)
        .ModelledAs("ring_fp16")
        .Options({"allreduce_algorithm"})
        .Tolerance(1e-2));

}  // namespace ringside
