#include "worker/strategies/allreduce/onebit_adam_hook.h"

#include <utility>
#include <vector>

#include "worker/strategies/allreduce/sign_hook.h"

namespace ringside {
namespace {

class OneBitAdamHook final : public SignHook {
 public:
  explicit OneBitAdamHook(std::function<absl::Span<const float>()> momentum)
      : SignHook("1-bit Adam", SignScale::kRms),
        momentum_(std::move(momentum)) {}

 protected:
  absl::Status Configure(const SyncContext& context) override {
    beta1_ = context.optimizer.beta1;
    weight_decay_ = context.optimizer.weight_decay;
    params_ = context.params;
    return absl::OkStatus();
  }

  // u = β1·m + (1 − β1)·(g + wd·p) over the bucket.
  absl::Span<const float> SignedValues(absl::Span<const float> grads,
                                       int64_t offset) override {
    update_.resize(grads.size());
    const float* m = momentum_().data() + offset;
    const float* p = params_.data() + offset;
    for (size_t i = 0; i < grads.size(); ++i) {
      update_[i] = beta1_ * m[i] +
                   (1.0f - beta1_) * (grads[i] + weight_decay_ * p[i]);
    }
    return update_;
  }

 private:
  const std::function<absl::Span<const float>()> momentum_;
  float beta1_ = 0.9f;
  float weight_decay_ = 0.0f;
  absl::Span<const float> params_;
  std::vector<float> update_;  // this bucket's u
};

}  // namespace

std::unique_ptr<BucketCommHook> MakeOneBitAdamHook(
    std::function<absl::Span<const float>()> momentum) {
  return std::make_unique<OneBitAdamHook>(std::move(momentum));
}

}  // namespace ringside
