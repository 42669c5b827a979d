#include "worker/strategies/sharded/sharded_gradients.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/allreduce/job_collective.h"
#include "worker/strategies/sharded/sharded_optimizer.h"

namespace ringside {

ShardedGradients::ShardedGradients(const SyncContext& context,
                                   Collective& collective,
                                   const TensorShards& shards,
                                   SequencedCommThread& comm, bool logical,
                                   MappedDeviceBuffer* pages)
    : context_(context),
      collective_(collective),
      shards_(shards),
      comm_(comm),
      counts_shard_(context.device == Device::kCpu || logical),
      pages_(pages) {
  if (context.device == Device::kCpu) {
    for (int t = 0; t < context.layout.num_tensors(); ++t) {
      shards.Release(context.grads, t);
    }
  }
  held_bytes_ =
      counts_shard_ ? shards.owned_elements() * 4 : context.layout.total_bytes();
  peak_bytes_ = held_bytes_;
}

void ShardedGradients::Reduce(int first_tensor, int last_tensor,
                              int64_t step) {
  const KeyRange range{shards_.RangeOf(first_tensor).begin,
                       shards_.RangeOf(last_tensor).end};
  const int64_t outside = counts_shard_ ? shards_.OutsideBytes(range) : 0;
  peak_bytes_ = std::max(peak_bytes_, held_bytes_ += outside);
  step_bytes_ += ShardedPhaseBytes(range.size() * 4, context_.world_size);
  std::vector<int64_t> counts = shards_.CountsWithin(range);
  step_critical_bytes_ +=
      PipelinedRingCriticalBytes(counts, RingPieceFloats(counts));
  comm_.Enqueue([this, first_tensor, last_tensor, step, outside,
                 counts = std::move(counts)]() {
    return ReduceNow(first_tensor, last_tensor, step, outside, counts);
  });
}

int64_t ShardedGradients::TakeStepBytes(int64_t* critical) {
  const int64_t bytes = step_bytes_;
  *critical = step_critical_bytes_;
  step_bytes_ = step_critical_bytes_ = 0;
  return bytes;
}

absl::Status ShardedGradients::ReduceNow(
    int first_tensor, int last_tensor, int64_t step, int64_t outside_bytes,
    const std::vector<int64_t>& counts) {
  for (int t = first_tensor; t <= last_tensor; ++t) {
    RS_RETURN_IF_ERROR(WaitForGradient(context_, t));
  }
  const KeyRange range{shards_.RangeOf(first_tensor).begin,
                       shards_.RangeOf(last_tensor).end};
  const double start = NowSeconds();
  const std::string& first = context_.layout.tensor(first_tensor).name;
  RS_RETURN_IF_ERROR(Annotate(
      collective_.ReduceScatter(
          context_.grads.subspan(range.begin, range.size()), counts,
          ReduceOp::kAverage,
          context_.options.rpc_timeout),
      absl::StrCat("reduce-scatter of the gradient of ", first,
                   last_tensor > first_tensor
                       ? absl::StrCat(" and the ", last_tensor - first_tensor,
                                      " tensors after it")
                       : std::string(),
                   " in step ", step)));
  if (context_.device == Device::kCpu) shards_.Release(context_.grads, range);
  // The collective returned with the data final: nothing queued reads the
  // pages outside the pieces any more.
  if (pages_ != nullptr) {
    RS_RETURN_IF_ERROR(Annotate(
        pages_->Drop(range.begin, range.end, /*after=*/nullptr),
        absl::StrCat("giving back the gradient pages of ", first)));
  }
  held_bytes_ -= outside_bytes;
  const double end = NowSeconds();
  for (int t = first_tensor; t <= last_tensor; ++t) {
    const TensorSpec& spec = context_.layout.tensor(t);
    RecordSpan(context_.options.timeline, spec.name, "REDUCE_SCATTER", start,
               end, {{"step", step}, {"bytes", spec.size * 4}});
  }
  return absl::OkStatus();
}

}  // namespace ringside
