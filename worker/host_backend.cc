#include "worker/host_backend.h"

#include <Eigen/Core>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status HostBackend::Init(uint64_t init_seed, SyncContext& context) {
  const TensorLayout& layout = model_.layout();
  params_.assign(layout.total_elements(), 0.0f);
  grads_.assign(layout.total_elements(), 0.0f);
  model_.InitParams(init_seed, absl::MakeSpan(params_));
  context.layout = layout;
  context.params = absl::MakeSpan(params_);
  context.grads = absl::MakeSpan(grads_);
  return absl::OkStatus();
}

absl::Status HostBackend::InstallParamUse(const ParamUseHooks* hooks) {
  if (hooks != nullptr && !model_.ReportsParamUse()) {
    return absl::UnimplementedError(absl::StrCat(
        "model ", model_.name(),
        " does not report parameter use (models/model.h), which a strategy "
        "keeping the parameters sharded needs; models that do: mlp, "
        "charlm, synthetic"));
  }
  model_.SetParamUseHooks(hooks);
  return absl::OkStatus();
}

absl::StatusOr<double> HostBackend::ForwardBackward(
    const Batch& batch, const GradientReadyFn& on_ready) {
  return model_.ForwardBackward(batch, params_, absl::MakeSpan(grads_),
                                on_ready);
}

absl::Status HostBackend::StashGradients(bool first) {
  if (first) {
    stash_ = grads_;
    return absl::OkStatus();
  }
  const size_t n = grads_.size();
  float* s = stash_.data();
  const float* g = grads_.data();
  for (size_t i = 0; i < n; ++i) s[i] = g[i] + s[i];
  return absl::OkStatus();
}

absl::Status HostBackend::FoldStashedGradient(int tensor, int passes) {
  if (stash_.size() != grads_.size() || tensor < 0 ||
      tensor >= model_.layout().num_tensors() || passes < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("FoldStashedGradient(", tensor, ", ", passes,
                     ") without a stash of every gradient, or out of range"));
  }
  const TensorSpec& spec = model_.layout().tensor(tensor);
  const float inverse = 1.0f / static_cast<float>(passes);
  float* g = grads_.data() + spec.offset;
  const float* s = stash_.data() + spec.offset;
  for (int64_t i = 0; i < spec.size; ++i) g[i] = (g[i] + s[i]) * inverse;
  return absl::OkStatus();
}

double HostBackend::ComputeCpuSeconds(double thread_cpu_s) const {
  // Emulated compute runs on the calling thread alone (and sleeps).
  if (!model_.emulated() && Eigen::nbThreads() != 1) return -1;
  return thread_cpu_s;
}

absl::StatusOr<double> HostBackend::Evaluate(const Batch& batch) {
  return model_.Evaluate(batch, params_);
}

absl::StatusOr<std::vector<float>> HostBackend::FinalParams() {
  return std::move(params_);
}

nlohmann::json HostBackend::RecordFields() const {
  return {
      {"emulated", model_.emulated()},
      // What the emulated compute is meant to take a step (0: none), for
      // the report's check that it held.
      {"emulated_compute_s", model_.EmulatedComputeSeconds()},
      {"device", "cpu"},
      {"precision", "fp32"},
      {"timing", "steady_clock"},
      // Threads of Eigen's matrix products (--eigen_threads).
      {"compute_threads", Eigen::nbThreads()},
  };
}

}  // namespace ringside
