#include "models/mlp.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

using RowMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using ConstRowVectorMap = Eigen::Map<const Eigen::RowVectorXf>;
using RowVectorMap = Eigen::Map<Eigen::RowVectorXf>;

int WeightIndex(int layer) { return 2 * layer; }
int BiasIndex(int layer) { return 2 * layer + 1; }

// Turns logits (rows of `z`) into d(mean loss)/d(logits) in place and
// returns the summed (not mean) cross-entropy. Stable: log-sum-exp.
double SoftmaxCrossEntropy(Eigen::Ref<RowMatrix> z, const int32_t* labels,
                           bool want_gradient) {
  const int64_t batch = z.rows();
  const float inv_batch = 1.0f / static_cast<float>(batch);
  double total = 0.0;
  for (int64_t r = 0; r < batch; ++r) {
    auto row = z.row(r);
    const float max = row.maxCoeff();
    const float sum = (row.array() - max).exp().sum();
    const float lse = max + std::log(sum);
    total += static_cast<double>(lse - row(labels[r]));
    if (want_gradient) {
      row = ((row.array() - lse).exp() * inv_batch).matrix();
      row(labels[r]) -= inv_batch;
    }
  }
  return total;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Mlp>> Mlp::Create(std::vector<int64_t> widths,
                                                 Precision precision) {
  if (widths.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mlp needs >= 2 widths (input, ..., classes), got ", widths.size()));
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (size_t l = 0; l < widths.size(); ++l) {
    if (widths[l] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("mlp width ", l, " must be > 0, got ", widths[l]));
    }
    if (l + 1 < widths.size()) {
      shapes.push_back(
          {absl::StrCat("fc", l, ".weight"), {widths[l], widths[l + 1]}});
      shapes.push_back({absl::StrCat("fc", l, ".bias"), {widths[l + 1]}});
    }
  }
  RS_ASSIGN_OR_RETURN(TensorLayout layout, TensorLayout::FromShapes(shapes));
  return std::unique_ptr<Mlp>(
      new Mlp(std::move(widths), std::move(layout), precision));
}

Mlp::Mlp(std::vector<int64_t> widths, TensorLayout layout, Precision precision)
    : widths_(std::move(widths)),
      layout_(std::move(layout)),
      acts_(widths_.size()),
      precision_(precision),
      x16_(widths_.size() - 1) {}

const float* Mlp::Operand(const float* x, int64_t count,
                          std::vector<float>& scratch) const {
  if (!bf16()) return x;
  scratch.resize(count);
  RoundToBf16(absl::MakeConstSpan(x, count), absl::MakeSpan(scratch));
  return scratch.data();
}

void Mlp::InitParams(uint64_t seed, absl::Span<float> params) const {
  if (static_cast<int64_t>(params.size()) != layout_.total_elements()) {
    std::fprintf(stderr, "Mlp::InitParams: params has %zu floats, want %lld\n",
                 params.size(),
                 static_cast<long long>(layout_.total_elements()));
    std::abort();
  }
  std::mt19937_64 rng(seed);
  const int layers = static_cast<int>(widths_.size()) - 1;
  for (int l = 0; l < layers; ++l) {
    // He-uniform: U(-sqrt(6 / fan_in), sqrt(6 / fan_in)).
    const float limit = std::sqrt(6.0f / static_cast<float>(widths_[l]));
    std::uniform_real_distribution<float> uniform(-limit, limit);
    for (float& w : layout_.View(WeightIndex(l), params)) w = uniform(rng);
    for (float& b : layout_.View(BiasIndex(l), params)) b = 0.0f;
  }
}

absl::Status Mlp::CheckBatch(const Batch& batch) const {
  if (batch.size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("mlp batch size must be > 0, got ", batch.size));
  }
  const int64_t want_features = batch.size * widths_.front();
  if (static_cast<int64_t>(batch.features.size()) != want_features) {
    return absl::InvalidArgumentError(
        absl::StrCat("mlp batch has ", batch.features.size(),
                     " features, want ", want_features, " (size ", batch.size,
                     " x input width ", widths_.front(), ")"));
  }
  if (static_cast<int64_t>(batch.labels.size()) != batch.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mlp batch has ", batch.labels.size(), " labels, want ", batch.size));
  }
  const int64_t classes = widths_.back();
  for (size_t i = 0; i < batch.labels.size(); ++i) {
    if (batch.labels[i] < 0 || batch.labels[i] >= classes) {
      return absl::InvalidArgumentError(
          absl::StrCat("mlp batch label ", i, " is ", batch.labels[i],
                       ", outside [0, ", classes, ")"));
    }
  }
  return absl::OkStatus();
}

namespace {

void Call(const std::function<void(int)>& hook, int tensor) {
  if (hook) hook(tensor);
}

}  // namespace

void Mlp::Forward(const Batch& batch, absl::Span<const float> params,
                  const ParamUseHooks* hooks) {
  const int layers = static_cast<int>(widths_.size()) - 1;
  const int64_t n = batch.size;
  for (int l = 0; l < layers; ++l) {
    if (hooks != nullptr) {
      Call(hooks->needed, WeightIndex(l));
      Call(hooks->needed, BiasIndex(l));
    }
    const float* in = l == 0 ? batch.features.data() : acts_[l].data();
    std::vector<float>& out_buf = acts_[l + 1 == layers ? 0 : l + 1];
    out_buf.resize(n * widths_[l + 1]);
    const int64_t weights = widths_[l] * widths_[l + 1];
    ConstMatrixMap x(Operand(in, n * widths_[l], x16_[l]), n, widths_[l]);
    ConstMatrixMap w(
        Operand(layout_.View(WeightIndex(l), params).data(), weights, w16_),
        widths_[l], widths_[l + 1]);
    ConstRowVectorMap b(layout_.View(BiasIndex(l), params).data(),
                        widths_[l + 1]);
    MatrixMap z(out_buf.data(), n, widths_[l + 1]);
    z.noalias() = x * w;
    z.rowwise() += b;
    if (hooks != nullptr) {
      Call(hooks->forward_done, WeightIndex(l));
      Call(hooks->forward_done, BiasIndex(l));
    }
    if (l + 1 < layers) z = z.cwiseMax(0.0f);
  }
}

absl::StatusOr<double> Mlp::ForwardBackward(const Batch& batch,
                                            absl::Span<const float> params,
                                            absl::Span<float> grads,
                                            const GradientReadyFn& on_ready) {
  RS_RETURN_IF_ERROR(CheckBatch(batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  RS_RETURN_IF_ERROR(CheckSpan("grads", grads.size()));
  Forward(batch, params, hooks_);
  const int layers = static_cast<int>(widths_.size()) - 1;
  const int64_t n = batch.size;

  // Logits live in acts_[0]; turn them into d(loss)/d(logits) in delta_.
  delta_.swap(acts_[0]);
  MatrixMap logits(delta_.data(), n, widths_.back());
  const double loss =
      SoftmaxCrossEntropy(logits, batch.labels.data(), /*want_gradient=*/true) /
      static_cast<double>(n);

  for (int l = layers - 1; l >= 0; --l) {
    const int64_t in_w = widths_[l];
    const int64_t out_w = widths_[l + 1];
    const float* in = l == 0 ? batch.features.data() : acts_[l].data();
    ConstMatrixMap x(in, n, in_w);
    // The products' operands: in bf16 the forward's rounded input and the
    // delta rounded once for both products.
    ConstMatrixMap x_op(bf16() ? x16_[l].data() : in, n, in_w);
    ConstMatrixMap delta(delta_.data(), n, out_w);
    ConstMatrixMap delta_op(Operand(delta_.data(), n * out_w, delta16_), n,
                            out_w);
    MatrixMap dw(layout_.View(WeightIndex(l), grads).data(), in_w, out_w);
    RowVectorMap db(layout_.View(BiasIndex(l), grads).data(), out_w);
    dw.noalias() = x_op.transpose() * delta_op;
    db = delta.colwise().sum();
    if (l > 0) {
      // Input gradient through ReLU: the last read of layer l's params.
      if (hooks_ != nullptr) Call(hooks_->needed, WeightIndex(l));
      ConstMatrixMap w(Operand(layout_.View(WeightIndex(l), params).data(),
                               in_w * out_w, w16_),
                       in_w, out_w);
      delta_prev_.resize(n * in_w);
      MatrixMap dx(delta_prev_.data(), n, in_w);
      dx.noalias() = delta_op * w.transpose();
      dx = (x.array() > 0.0f).select(dx, 0.0f);
      delta_.swap(delta_prev_);
    }
    if (on_ready) {
      on_ready(WeightIndex(l));
      on_ready(BiasIndex(l));
    }
  }
  return loss;
}

absl::StatusOr<double> Mlp::Evaluate(const Batch& batch,
                                     absl::Span<const float> params) {
  RS_RETURN_IF_ERROR(CheckBatch(batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  Forward(batch, params, /*hooks=*/nullptr);
  MatrixMap logits(acts_[0].data(), batch.size, widths_.back());
  return SoftmaxCrossEntropy(logits, batch.labels.data(),
                             /*want_gradient=*/false) /
         static_cast<double>(batch.size);
}

double Mlp::FlopsPerExample() const {
  // Forward x*W (2 flops per weight) + backward dW and dX (4 per weight).
  double weights = 0;
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    weights += static_cast<double>(widths_[l]) * widths_[l + 1];
  }
  return 6.0 * weights;
}

absl::Status Mlp::CheckSpan(const char* what, size_t size) const {
  const int64_t want = layout_.total_elements();
  if (static_cast<int64_t>(size) != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("mlp ", what, " has ", size, " floats, want ", want));
  }
  return absl::OkStatus();
}

}  // namespace ringside
