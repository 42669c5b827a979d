#include "worker/strategies/allreduce/gather_hook.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "core/step_floats.h"
#include "worker/strategies/allreduce/compression_start_options.h"

namespace ringside {

absl::Status GatherHook::Connect(const SyncContext& context, Store&,
                                 const std::string&, Collective& collective) {
  const auto start = context.options.strategy.Get<CompressionStartOptions>();
  RS_RETURN_IF_ERROR(start.Validate());
  start_step_ = start.start_step;
  world_size_ = context.world_size;
  timeout_ = context.options.rpc_timeout;
  collective_ = &collective;
  layout_ = context.layout;
  return Configure(context);
}

absl::Status GatherHook::Reduce(absl::Span<float> grads, int64_t offset,
                                std::vector<HookPhase>* phases) {
  if (steps_[offset]++ < start_step_) {
    wire_.Add(static_cast<int64_t>(grads.size()),
              static_cast<double>(grads.size()));
    return AverageBucket(
        *collective_, grads, timeout_,
        absl::StrCat("all-reduce (before ", what_, " compression starts)"),
        phases);
  }
  const bool timed = phases != nullptr;
  const double t0 = timed ? NowSeconds() : 0.0;
  const absl::Span<const float> message = Compress(grads, offset);
  const double t1 = timed ? NowSeconds() : 0.0;
  received_.resize(message.size() * world_size_);
  RS_RETURN_IF_ERROR(Annotate(
      collective_->AllGather(message, absl::MakeSpan(received_), timeout_),
      absl::StrCat(what_, " all-gather")));
  const double t2 = timed ? NowSeconds() : 0.0;
  std::fill(grads.begin(), grads.end(), 0.0f);
  for (int r = 0; r < world_size_; ++r) {
    Decompress(absl::MakeConstSpan(received_).subspan(r * message.size(),
                                                      message.size()),
               grads);
  }
  if (world_size_ > 1) {
    const float inverse_n = 1.0f / static_cast<float>(world_size_);
    for (float& g : grads) g *= inverse_n;
  }
  wire_.Add(static_cast<int64_t>(grads.size()),
            0.5 * static_cast<double>(world_size_) *
                static_cast<double>(message.size()));
  if (timed) {
    phases->push_back({"COMPRESS", t0, t1});
    phases->push_back({"ALLGATHER", t1, t2});
    phases->push_back({"DECOMPRESS", t2, NowSeconds()});
  }
  return absl::OkStatus();
}

std::string GatherHook::Variant() const {
  return start_step_ > 0 ? absl::StrCat(start_step_, " exact first") : "";
}

std::vector<float> GatherHook::ExportState(
    absl::Span<const BucketSpan> buckets) {
  std::vector<float> state;
  for (const BucketSpan& b : buckets) {
    const auto [high, low] = StepAsFloats(steps_[b.offset]);
    state.push_back(high);
    state.push_back(low);
    const std::vector<float>& error = ErrorMemory(b.offset, b.size);
    state.insert(state.end(), error.begin(), error.end());
  }
  return state;
}

absl::Status GatherHook::ImportState(absl::Span<const BucketSpan> buckets,
                                     absl::Span<const float> state) {
  HookStateReader reader(what_, state);
  for (const BucketSpan& b : buckets) {
    RS_ASSIGN_OR_RETURN(const absl::Span<const float> steps, reader.Take(2));
    steps_[b.offset] = StepFromFloats(steps[0], steps[1]);
    RS_ASSIGN_OR_RETURN(const absl::Span<const float> error,
                        reader.Take(b.size));
    std::vector<float>& memory = ErrorMemory(b.offset, b.size);
    std::copy(error.begin(), error.end(), memory.begin());
  }
  return reader.Done();
}

}  // namespace ringside
