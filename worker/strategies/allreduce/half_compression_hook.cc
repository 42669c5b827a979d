#include "worker/strategies/allreduce/half_compression_hook.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/gloo_half_allreduce.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/strategies/allreduce/job_collective.h"

namespace ringside {
namespace {

class HalfCompressionHook final : public BucketCommHook {
 public:
  explicit HalfCompressionHook(HalfFormat format) : format_(format) {}

  absl::Status Connect(const SyncContext& context, Store& store,
                       const std::string& store_prefix,
                       Collective&) override {
    world_size_ = context.world_size;
    timeout_ = context.options.rpc_timeout;
    RS_ASSIGN_OR_RETURN(
        half_, GlooHalfAllReduce::Create(
                   store, context.rank, context.world_size,
                   JobGlooOptions(context, store_prefix + "/half"), format_));
    halves_.assign(context.layout.total_elements(), 0);
    return absl::OkStatus();
  }

  absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                      std::vector<HookPhase>* phases) override {
    absl::Span<uint16_t> halves =
        absl::MakeSpan(halves_).subspan(offset, grads.size());
    const bool timed = phases != nullptr;
    const double t0 = timed ? NowSeconds() : 0.0;
    FloatToFormat(format_, grads, halves);
    const double t1 = timed ? NowSeconds() : 0.0;
    RS_RETURN_IF_ERROR(
        Annotate(half_->AllReduceSum(halves, timeout_),
                 absl::StrCat(HalfFormatName(format_), " all-reduce")));
    const double t2 = timed ? NowSeconds() : 0.0;
    FormatToFloat(format_, halves, grads);
    if (world_size_ > 1) {
      const float scale = 1.0f / static_cast<float>(world_size_);
      for (float& g : grads) g *= scale;
    }
    if (timed) {
      phases->push_back({"COMPRESS", t0, t1});
      phases->push_back({"ALLREDUCE", t1, t2});
      phases->push_back({"DECOMPRESS", t2, NowSeconds()});
    }
    return absl::OkStatus();
  }

  int wire_bytes_per_element() const override { return 2; }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu;
  }

 private:
  const HalfFormat format_;
  int world_size_ = 1;
  absl::Duration timeout_;
  std::unique_ptr<GlooHalfAllReduce> half_;
  std::vector<uint16_t> halves_;  // 16-bit image of the grads
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeFp16CompressionHook() {
  return std::make_unique<HalfCompressionHook>(HalfFormat::kFp16);
}

std::unique_ptr<BucketCommHook> MakeBf16CompressionHook() {
  return std::make_unique<HalfCompressionHook>(HalfFormat::kBf16);
}

}  // namespace ringside
