// CudaOptimizer with the kernels of mlp_kernels.h (--config=cuda).
#include "models/cuda/cuda_optimizer.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"
#include "device/device_buffer.h"
#include "models/cuda/mlp_kernels.h"

namespace ringside {
namespace {

class CudaOptimizerImpl final : public CudaOptimizer {
 public:
  CudaOptimizerImpl(const OptimizerConfig& config, int64_t num_elements,
                    int device)
      : config_(config), num_elements_(num_elements), device_(device) {}

  // Zeroed state: velocity for SGD with momentum, m and v for Adam.
  absl::Status Init() {
    const bool adam = config_.type == "adam";
    const bool momentum = config_.type == "sgd" && config_.momentum != 0.0f;
    if (adam || momentum) {
      RS_ASSIGN_OR_RETURN(first_, DeviceBuffer::Create(device_, num_elements_));
      RS_RETURN_IF_ERROR(first_.Zero());
    }
    if (adam) {
      RS_ASSIGN_OR_RETURN(second_,
                          DeviceBuffer::Create(device_, num_elements_));
      RS_RETURN_IF_ERROR(second_.Zero());
    }
    return absl::OkStatus();
  }

  absl::Status Apply(int64_t state_offset, float* d_params,
                     const float* d_grads, int64_t count, int64_t step,
                     CudaStream stream) override {
    if (state_offset < 0 || count < 0 || state_offset > num_elements_ ||
        count > num_elements_ - state_offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CudaOptimizer::Apply: state range [", state_offset, ", ",
          state_offset + count, ") outside [0, ", num_elements_, ")"));
    }
    if (step < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("CudaOptimizer::Apply: step must be >= 1, got ", step));
    }
    if (count == 0) return absl::OkStatus();
    if (d_params == nullptr || d_grads == nullptr) {
      return absl::InvalidArgumentError(
          "CudaOptimizer::Apply: null params or grads");
    }
    RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    if (config_.type == "sgd") {
      const kernels::SgdStep s{config_.LrAt(step), config_.momentum,
                               config_.weight_decay};
      float* v = first_.size() > 0 ? first_.data() + state_offset : nullptr;
      RS_CUDA_RETURN_IF_ERROR(
          kernels::LaunchSgdStep(s, d_params, d_grads, v, count, stream));
      return absl::OkStatus();
    }
    // Bias corrections as optimizer.cc computes them: double, then float.
    const kernels::AdamStep s{
        config_.LrAt(step),
        config_.beta1,
        config_.beta2,
        config_.eps,
        config_.weight_decay,
        static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta1),
                                          static_cast<double>(step))),
        static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta2),
                                          static_cast<double>(step))),
    };
    RS_CUDA_RETURN_IF_ERROR(kernels::LaunchAdamStep(
        s, d_params, d_grads, first_.data() + state_offset,
        second_.data() + state_offset, count, stream));
    return absl::OkStatus();
  }

  const OptimizerConfig& config() const override { return config_; }
  int device() const override { return device_; }
  int64_t state_bytes() const override {
    return static_cast<int64_t>((first_.size() + second_.size()) *
                                sizeof(float));
  }

 private:
  const OptimizerConfig config_;
  const int64_t num_elements_;
  const int device_;
  DeviceBuffer first_;   // SGD velocity or Adam m; empty for plain SGD
  DeviceBuffer second_;  // Adam v
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaOptimizer>> CudaOptimizer::Create(
    const OptimizerConfig& config, int64_t num_elements, int device) {
  RS_RETURN_IF_ERROR(config.Validate());
  if (num_elements < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer num_elements must be >= 0, got ", num_elements));
  }
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda optimizer device must be >= 0, got ", device));
  }
  auto optimizer =
      std::make_unique<CudaOptimizerImpl>(config, num_elements, device);
  RS_RETURN_IF_ERROR(optimizer->Init());
  return std::unique_ptr<CudaOptimizer>(std::move(optimizer));
}

}  // namespace ringside
