#include "worker/strategies/allreduce/bucket_comm_hook.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

class AllReduceHook final : public BucketCommHook {
 public:
  absl::Status Connect(const SyncContext& context, Store&, const std::string&,
                       Collective& collective) override {
    timeout_ = context.options.rpc_timeout;
    collective_ = &collective;
    return absl::OkStatus();
  }
  absl::Status Reduce(absl::Span<float> grads, int64_t,
                      std::vector<HookPhase>* phases) override {
    return AverageBucket(*collective_, grads, timeout_, "all-reduce", phases);
  }
  int wire_bytes_per_element() const override { return 4; }
  bool SupportsDevice(Device) const override { return true; }

 private:
  Collective* collective_ = nullptr;
  absl::Duration timeout_;
};

}  // namespace

absl::Status BucketCommHook::ImportState(absl::Span<const BucketSpan>,
                                         absl::Span<const float> state) {
  if (state.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "this hook keeps no state across steps, but ", state.size(),
      " floats of it were given"));
}

absl::StatusOr<absl::Span<const float>> HookStateReader::Take(int64_t n) {
  if (n < 0 || at_ + static_cast<size_t>(n) > state_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        hook_, " state: ", state_.size(), " floats do not hold the ",
        at_ + static_cast<size_t>(std::max<int64_t>(n, 0)),
        " these buckets need (another model, bucket sizes or options?)"));
  }
  const absl::Span<const float> piece = state_.subspan(at_, n);
  at_ += static_cast<size_t>(n);
  return piece;
}

absl::Status HookStateReader::Done() const {
  if (at_ == state_.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      hook_, " state: ", state_.size(), " floats, but these buckets take ",
      at_, " (another model, bucket sizes or options?)"));
}

absl::Status AverageBucket(Collective& collective, absl::Span<float> grads,
                           absl::Duration timeout, absl::string_view what,
                           std::vector<HookPhase>* phases) {
  const double start = phases != nullptr ? NowSeconds() : 0.0;
  const absl::Status s =
      collective.AllReduce(grads, ReduceOp::kAverage, timeout);
  if (phases != nullptr) phases->push_back({"ALLREDUCE", start, NowSeconds()});
  return Annotate(s, what);
}

std::unique_ptr<BucketCommHook> MakeAllReduceHook() {
  return std::make_unique<AllReduceHook>();
}

std::vector<BucketPart> BucketParts(const TensorLayout& layout,
                                    int64_t offset, int64_t size) {
  std::vector<BucketPart> parts;
  const int64_t end = offset + size;
  for (int t = 0; t < layout.num_tensors(); ++t) {
    const TensorSpec& spec = layout.tensor(t);
    if (spec.offset + spec.size <= offset || spec.offset >= end) continue;
    BucketPart part;
    part.tensor = t;
    part.begin = std::max(spec.offset, offset) - offset;
    part.size = std::min(spec.offset + spec.size, end) - offset - part.begin;
    part.whole = spec.offset >= offset && spec.offset + spec.size <= end;
    parts.push_back(part);
  }
  return parts;
}

}  // namespace ringside
