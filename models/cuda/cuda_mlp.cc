// CudaMlp with cuBLAS and our kernels (--config=cuda).
#include "models/cuda/cuda_mlp.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"
#include "device/device_buffer.h"
#include "models/cuda/bf16_kernels.h"
#include "models/cuda/gemm.h"
#include "models/cuda/mlp_kernels.h"
#include "models/cuda/model_handles.h"
#include "models/mlp.h"

namespace ringside {
namespace {

static_assert(sizeof(int32_t) == sizeof(float), "labels_ holds int32 labels");

int WeightIndex(int layer) { return 2 * layer; }
int BiasIndex(int layer) { return 2 * layer + 1; }

// Calls `hook` (when `hooks` and it are set) for `tensor`.
void Call(const ParamUseHooks* hooks,
          std::function<void(int)> ParamUseHooks::*hook, int tensor) {
  if (hooks != nullptr && hooks->*hook) (hooks->*hook)(tensor);
}

class CudaMlpImpl final : public CudaMlp {
 public:
  CudaMlpImpl(std::unique_ptr<Mlp> host, std::vector<int64_t> widths,
              int device, Precision precision)
      : host_(std::move(host)),
        widths_(std::move(widths)),
        device_(device),
        precision_(precision) {}

  // Handle and events, and room for the weights' bfloat16 copies (one
  // buffer a layer, so each starts aligned for the tensor cores); called
  // once by Create.
  absl::Status Init() {
    RS_RETURN_IF_ERROR(handles_.Init(device_, layout().num_tensors()));
    if (bf16()) {
      w16_.resize(widths_.size() - 1);
      for (size_t l = 0; l < w16_.size(); ++l) {
        RS_ASSIGN_OR_RETURN(
            w16_[l],
            Bf16Buffer(device_,
                       layout().tensor(WeightIndex(static_cast<int>(l))).size));
      }
    }
    return absl::OkStatus();
  }

  const TensorLayout& layout() const override { return host_->layout(); }
  int device() const override { return device_; }
  Precision precision() const override { return precision_; }

  void InitParams(uint64_t seed, absl::Span<float> host_params) const override {
    host_->InitParams(seed, host_params);
  }

  absl::Status InitDeviceParams(uint64_t seed, float* d_params) const override {
    if (d_params == nullptr) {
      return absl::InvalidArgumentError("CudaMlp: d_params is null");
    }
    std::vector<float> params(layout().total_elements());
    host_->InitParams(seed, absl::MakeSpan(params));
    RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return CopyToDevice(params, d_params);
  }

  absl::StatusOr<double> ForwardBackward(const Batch& batch,
                                         const float* d_params, float* d_grads,
                                         const GradientReadyFn& on_ready,
                                         CudaStream stream) override {
    RS_RETURN_IF_ERROR(Prepare(batch, d_params, stream));
    if (d_grads == nullptr) {
      return absl::InvalidArgumentError("CudaMlp: d_grads is null");
    }
    const int64_t n = batch.size;
    const int layers = static_cast<int>(widths_.size()) - 1;
    RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(handles_.start(), stream));
    RS_RETURN_IF_ERROR(Forward(n, d_params, hooks_, stream));
    RS_CUDA_RETURN_IF_ERROR(kernels::LaunchSoftmaxCrossEntropy(
        delta_[0].data(), input_labels_, n, widths_.back(),
        1.0f / static_cast<float>(n), /*want_gradient=*/true, row_loss_.data(),
        stream));

    int cur = 0;  // delta_[cur] holds d(loss)/d(layer l's output)
    for (int l = layers - 1; l >= 0; --l) {
      const int in_w = static_cast<int>(widths_[l]);
      const int out_w = static_cast<int>(widths_[l + 1]);
      const float* x = l == 0 ? input_ : acts_[l].data();
      const float* delta = delta_[cur].data();
      Call(hooks_, &ParamUseHooks::writes_gradient, WeightIndex(l));
      Call(hooks_, &ParamUseHooks::writes_gradient, BiasIndex(l));
      float* dw = d_grads + layout().tensor(WeightIndex(l)).offset;
      float* db = d_grads + layout().tensor(BiasIndex(l)).offset;
      // The products' operands: float32, or their bfloat16 copies.
      const void* x_op = x;
      const void* delta_op = delta;
      if (bf16()) {
        RS_CUDA_RETURN_IF_ERROR(
            kernels::LaunchToBf16(delta, Bf16(delta16_), n * out_w, stream));
        x_op = Bf16(x16_[l]);
        delta_op = Bf16(delta16_);
      }
      // dW (in x out) = X^T (in x n) * delta (n x out).
      RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), /*trans_a=*/true,
                                      /*trans_b=*/false, in_w, out_w, n, x_op,
                                      delta_op, dw, bf16()));
      RS_RETURN_IF_ERROR(handles_.ColumnSums(delta, n, out_w, db));
      if (l > 0) {
        // dX (n x in) = delta (n x out) * W^T, masked by ReLU: the last
        // read of layer l's weights.
        Call(hooks_, &ParamUseHooks::needed, WeightIndex(l));
        float* dx = delta_[1 - cur].data();
        RS_ASSIGN_OR_RETURN(const void* w_op,
                            WeightOperand(l, d_params, stream));
        RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), /*trans_a=*/false,
                                        /*trans_b=*/true, n, in_w, out_w,
                                        delta_op, w_op, dx, bf16()));
        RS_CUDA_RETURN_IF_ERROR(
            kernels::LaunchReluBackward(dx, x, n * in_w, stream));
        cur = 1 - cur;
      }
      for (int tensor : {WeightIndex(l), BiasIndex(l)}) {
        RS_CUDA_RETURN_IF_ERROR(
            cudaEventRecord(handles_.ready(tensor), stream));
        if (on_ready) on_ready(tensor);
      }
    }
    RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(handles_.stop(), stream));
    RS_ASSIGN_OR_RETURN(const double loss, MeanLoss(n, stream));
    RS_ASSIGN_OR_RETURN(compute_seconds_, handles_.ElapsedSeconds());
    return loss;
  }

  absl::StatusOr<double> Evaluate(const Batch& batch, const float* d_params,
                                  CudaStream stream) override {
    RS_RETURN_IF_ERROR(Prepare(batch, d_params, stream));
    const int64_t n = batch.size;
    RS_RETURN_IF_ERROR(Forward(n, d_params, /*hooks=*/nullptr, stream));
    RS_CUDA_RETURN_IF_ERROR(kernels::LaunchSoftmaxCrossEntropy(
        delta_[0].data(), input_labels_, n, widths_.back(), 1.0f,
        /*want_gradient=*/false, row_loss_.data(), stream));
    return MeanLoss(n, stream);
  }

  CudaEvent grad_ready_event(int tensor) const override {
    return handles_.ready(tensor);
  }

  void UseStagedInput(const DeviceBatch& staged) override { staged_ = staged; }

  double last_compute_seconds() const override { return compute_seconds_; }
  double FlopsPerExample() const override { return host_->FlopsPerExample(); }

 private:
  int32_t* labels() { return reinterpret_cast<int32_t*>(labels_.data()); }

  absl::Status CheckBatch(const Batch& batch) const {
    if (batch.size <= 0 || batch.size > INT_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cuda mlp batch size must be in [1, 2^31), got ", batch.size));
    }
    const int64_t want_features = batch.size * widths_.front();
    if (static_cast<int64_t>(batch.features.size()) != want_features) {
      return absl::InvalidArgumentError(
          absl::StrCat("cuda mlp batch has ", batch.features.size(),
                       " features, want ", want_features, " (size ", batch.size,
                       " x input width ", widths_.front(), ")"));
    }
    if (static_cast<int64_t>(batch.labels.size()) != batch.size) {
      return absl::InvalidArgumentError(
          absl::StrCat("cuda mlp batch has ", batch.labels.size(),
                       " labels, want ", batch.size));
    }
    const int64_t classes = widths_.back();
    for (size_t i = 0; i < batch.labels.size(); ++i) {
      if (batch.labels[i] < 0 || batch.labels[i] >= classes) {
        return absl::InvalidArgumentError(
            absl::StrCat("cuda mlp batch label ", i, " is ", batch.labels[i],
                         ", outside [0, ", classes, ")"));
      }
    }
    return absl::OkStatus();
  }

  // Checks, makes the device current, grows the scratch, binds cuBLAS to
  // `stream` and points input_ / input_labels_ at the staged input, or
  // enqueues the batch's copies into features_ / labels_.
  absl::Status Prepare(const Batch& batch, const float* d_params,
                       cudaStream_t stream) {
    // Staged input serves this call alone, whatever it finds.
    const std::optional<DeviceBatch> staged =
        std::exchange(staged_, std::nullopt);
    RS_RETURN_IF_ERROR(CheckBatch(batch));
    if (d_params == nullptr) {
      return absl::InvalidArgumentError("CudaMlp: d_params is null");
    }
    RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    RS_RETURN_IF_ERROR(Reserve(batch.size));
    RS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(handles_.cublas(), stream));
    if (staged.has_value() && staged->size == batch.size &&
        staged->features != nullptr && staged->labels != nullptr) {
      input_ = staged->features;
      input_labels_ = staged->labels;
      return absl::OkStatus();
    }
    // Pageable sources: each call returns once its data is staged, so the
    // batch may be reused as soon as we return.
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        features_.data(), batch.features.data(),
        batch.features.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        labels(), batch.labels.data(), batch.labels.size() * sizeof(int32_t),
        cudaMemcpyHostToDevice, stream));
    input_ = features_.data();
    input_labels_ = labels();
    return absl::OkStatus();
  }

  // Scratch for batches of up to `n` examples.
  absl::Status Reserve(int64_t n) {
    if (n <= capacity_) return absl::OkStatus();
    const int layers = static_cast<int>(widths_.size()) - 1;
    const int64_t max_width =
        *std::max_element(widths_.begin() + 1, widths_.end());
    RS_ASSIGN_OR_RETURN(features_,
                        DeviceBuffer::Create(device_, n * widths_.front()));
    RS_ASSIGN_OR_RETURN(labels_, DeviceBuffer::Create(device_, n));
    RS_ASSIGN_OR_RETURN(row_loss_, DeviceBuffer::Create(device_, n));
    acts_.resize(layers);  // acts_[0] unused: layer 0 reads features_
    for (int l = 1; l < layers; ++l) {
      RS_ASSIGN_OR_RETURN(acts_[l],
                          DeviceBuffer::Create(device_, n * widths_[l]));
    }
    for (DeviceBuffer& d : delta_) {
      RS_ASSIGN_OR_RETURN(d, DeviceBuffer::Create(device_, n * max_width));
    }
    if (bf16()) {
      x16_.resize(layers);  // x16_[l]: layer l's input, bfloat16
      for (int l = 0; l < layers; ++l) {
        RS_ASSIGN_OR_RETURN(x16_[l], Bf16Buffer(device_, n * widths_[l]));
      }
      RS_ASSIGN_OR_RETURN(delta16_, Bf16Buffer(device_, n * max_width));
    }
    host_row_loss_.resize(n);
    capacity_ = n;
    return absl::OkStatus();
  }

  // Hidden activations into acts_[1..], logits into delta_[0]; reports
  // parameter use to `hooks` (may be null) as each layer is enqueued.
  absl::Status Forward(int64_t n, const float* d_params,
                       const ParamUseHooks* hooks, cudaStream_t stream) {
    const int layers = static_cast<int>(widths_.size()) - 1;
    for (int l = 0; l < layers; ++l) {
      Call(hooks, &ParamUseHooks::needed, WeightIndex(l));
      Call(hooks, &ParamUseHooks::needed, BiasIndex(l));
      const int in_w = static_cast<int>(widths_[l]);
      const int out_w = static_cast<int>(widths_[l + 1]);
      const float* x = l == 0 ? input_ : acts_[l].data();
      float* z = l + 1 == layers ? delta_[0].data() : acts_[l + 1].data();
      const float* b = d_params + layout().tensor(BiasIndex(l)).offset;
      // Z (n x out) = X (n x in) * W (in x out).
      const void* x_op = x;
      if (bf16()) {
        if (l == 0) {
          RS_CUDA_RETURN_IF_ERROR(
              kernels::LaunchToBf16(input_, Bf16(x16_[0]), n * in_w, stream));
        }
        x_op = Bf16(x16_[l]);
      }
      RS_ASSIGN_OR_RETURN(const void* w_op, WeightOperand(l, d_params, stream));
      RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), false, false, n, out_w,
                                      in_w, x_op, w_op, z, bf16()));
      RS_CUDA_RETURN_IF_ERROR(kernels::LaunchAddBias(
          z, b, n, out_w, /*relu=*/l + 1 < layers, stream));
      if (bf16() && l + 1 < layers) {
        // The next layer's input, rounded once.
        RS_CUDA_RETURN_IF_ERROR(
            kernels::LaunchToBf16(z, Bf16(x16_[l + 1]), n * out_w, stream));
      }
      Call(hooks, &ParamUseHooks::forward_done, WeightIndex(l));
      Call(hooks, &ParamUseHooks::forward_done, BiasIndex(l));
    }
    return absl::OkStatus();
  }

  // Reads the row losses back (waits for the stream) and averages them in
  // double, as the CPU model does.
  absl::StatusOr<double> MeanLoss(int64_t n, cudaStream_t stream) {
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_row_loss_.data(),
                                            row_loss_.data(), n * sizeof(float),
                                            cudaMemcpyDeviceToHost, stream));
    RS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    double total = 0.0;
    for (int64_t r = 0; r < n; ++r) total += host_row_loss_[r];
    return total / static_cast<double>(n);
  }

  bool bf16() const { return precision_ == Precision::kBf16; }

  // Layer l's weights as a product's operand: in float32, in place; in
  // bf16, rounded into w16_[l] (enqueued on `stream`, after whatever the
  // hooks ordered before it) at each use, since a sharded run may have
  // replaced them since the last.
  absl::StatusOr<const void*> WeightOperand(int l, const float* d_params,
                                            cudaStream_t stream) {
    const TensorSpec& weight = layout().tensor(WeightIndex(l));
    const float* w = d_params + weight.offset;
    if (!bf16()) return w;
    uint16_t* out = Bf16(w16_[l]);
    RS_CUDA_RETURN_IF_ERROR(kernels::LaunchToBf16(w, out, weight.size, stream));
    return out;
  }

  const std::unique_ptr<Mlp> host_;  // layout, init, flops
  const std::vector<int64_t> widths_;
  const int device_;
  const Precision precision_;
  ModelHandles handles_;
  double compute_seconds_ = 0.0;

  // Scratch for batches of up to capacity_ examples.
  int64_t capacity_ = 0;
  // The batch the current call reads: features_ and labels_ (copied in),
  // or staged input (UseStagedInput, consumed by the next Prepare).
  std::optional<DeviceBatch> staged_;
  const float* input_ = nullptr;
  const int32_t* input_labels_ = nullptr;
  DeviceBuffer features_;           // n x widths_[0]
  DeviceBuffer labels_;             // n int32 labels
  DeviceBuffer row_loss_;           // n
  std::vector<DeviceBuffer> acts_;  // acts_[l]: n x widths_[l], l >= 1
  DeviceBuffer delta_[2];  // n x max width; delta_[0] first holds logits
  // kBf16 only: each layer's weights', each layer input's and the delta's
  // bfloat16 copies (x16_[0] the batch's features)
  std::vector<DeviceBuffer> w16_;
  std::vector<DeviceBuffer> x16_;
  DeviceBuffer delta16_;
  std::vector<float> host_row_loss_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaMlp>> CudaMlp::Create(
    std::vector<int64_t> widths, int device, Precision precision) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Mlp> host, Mlp::Create(widths));
  for (size_t l = 0; l < widths.size(); ++l) {
    if (widths[l] > INT_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cuda mlp width ", l, " must be < 2^31 (cuBLAS), got ", widths[l]));
    }
  }
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda mlp device must be >= 0, got ", device));
  }
  auto mlp = std::make_unique<CudaMlpImpl>(std::move(host), std::move(widths),
                                           device, precision);
  RS_RETURN_IF_ERROR(mlp->Init());
  return std::unique_ptr<CudaMlp>(std::move(mlp));
}

}  // namespace ringside
