#include "worker/strategies/allreduce/bucket_comm_hook.h"

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
    const double start = phases != nullptr ? NowSeconds() : 0.0;
    absl::Status s =
        collective_->AllReduce(grads, ReduceOp::kAverage, timeout_);
    if (phases != nullptr) {
      phases->push_back({"ALLREDUCE", start, NowSeconds()});
    }
    return Annotate(s, "all-reduce");
  }
  int wire_bytes_per_element() const override { return 4; }
  bool SupportsDevice(Device) const override { return true; }

 private:
  Collective* collective_ = nullptr;
  absl::Duration timeout_;
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeAllReduceHook() {
  return std::make_unique<AllReduceHook>();
}

}  // namespace ringside
