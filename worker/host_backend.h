// HostBackend: the ComputeBackend (worker/compute_backend.h) of a CPU
// worker. The model (models/model.h) computes on flat parameter and
// gradient vectors in host memory; a gradient is final when on_ready runs,
// compute time is the steady-clock time of ForwardBackward (its CPU time
// too, where the model computes on the calling thread alone), and the final
// record says "device":"cpu", "timing":"steady_clock" and whether the
// model's compute is emulated. Not thread-safe; the model must outlive it.
#ifndef RINGSIDE_WORKER_HOST_BACKEND_H_
#define RINGSIDE_WORKER_HOST_BACKEND_H_

#include <string>
#include <vector>

#include "models/model.h"
#include "worker/compute_backend.h"

namespace ringside {

class HostBackend final : public ComputeBackend {
 public:
  explicit HostBackend(Model& model) : model_(model) {}

  absl::Status Init(uint64_t init_seed, SyncContext& context) override;
  SyncStrategy& Adapt(SyncStrategy& strategy) override { return strategy; }
  // UNIMPLEMENTED naming the model when it does not report parameter use.
  absl::Status InstallParamUse(const ParamUseHooks* hooks) override;
  void BeginStep(int64_t, bool) override {}
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const GradientReadyFn& on_ready) override;
  double ComputeSeconds(double wall_s) const override { return wall_s; }
  // thread_cpu_s with real compute on one Eigen thread; else −1.
  double ComputeCpuSeconds(double thread_cpu_s) const override;
  absl::Status StashGradients(bool first) override;
  absl::Status FoldStashedGradient(int tensor, int passes) override;
  bool ScaleEmulatedCompute(double factor) override {
    return model_.ScaleEmulatedCompute(factor);
  }
  int64_t StashBytes() const override {
    return static_cast<int64_t>(stash_.size()) * 4;
  }
  void EndSteps() override {}
  absl::StatusOr<double> Evaluate(const Batch& batch) override;
  absl::StatusOr<std::vector<float>> FinalParams() override;
  std::string model_name() const override { return model_.name(); }
  nlohmann::json RecordFields() const override;

 private:
  Model& model_;
  std::vector<float> params_;
  std::vector<float> grads_;
  std::vector<float> stash_;  // gradient accumulation; empty until used
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_HOST_BACKEND_H_
