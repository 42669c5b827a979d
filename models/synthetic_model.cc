#include "models/synthetic_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

// SplitMix64 finalizer: a counter-based generator for InitParams.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticModel>> SyntheticModel::Create(
    GradientProfile profile, const SyntheticModelOptions& options) {
  if (!std::isfinite(options.emulated_compute_s) ||
      options.emulated_compute_s < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic emulated_compute_s must be finite and >= 0, "
                     "got ",
                     options.emulated_compute_s));
  }
  if (!(options.compute_scale > 0) || !std::isfinite(options.compute_scale)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic compute_scale must be finite and > 0, got ",
        options.compute_scale));
  }
  if (!(options.forward_fraction >= 0 && options.forward_fraction < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic forward_fraction must be in [0, 1), got ",
                     options.forward_fraction));
  }
  if (profile.tensors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("gradient profile '", profile.name, "' has no tensors"));
  }
  absl::StatusOr<TensorLayout> layout = profile.Layout();
  if (!layout.ok()) {
    return Annotate(layout.status(),
                    absl::StrCat("gradient profile '", profile.name, "'"));
  }
  return std::unique_ptr<SyntheticModel>(
      new SyntheticModel(std::move(profile), options, *std::move(layout)));
}

SyntheticModel::SyntheticModel(GradientProfile profile,
                               const SyntheticModelOptions& options,
                               TensorLayout layout)
    : profile_(std::move(profile)),
      options_(options),
      layout_(std::move(layout)) {
  const int64_t n = layout_.total_elements();
  for (int64_t j = 0; j < n; ++j) {
    const double u = Pattern(j);
    pattern_sq_norm_ += u * u;
  }
}

std::string SyntheticModel::name() const {
  return absl::StrCat("synthetic:", profile_.name);
}

void SyntheticModel::InitParams(uint64_t seed, absl::Span<float> params) const {
  CHECK_EQ(static_cast<int64_t>(params.size()), layout_.total_elements())
      << "SyntheticModel::InitParams: wrong params size";
  const uint64_t base = Mix(seed);
  for (size_t j = 0; j < params.size(); ++j) {
    // Top 24 bits: a float in [0, 1) with every value exact, then [-1, 1).
    const float unit = static_cast<float>(Mix(base ^ j) >> 40) * 0x1p-24f;
    params[j] = 2.0f * unit - 1.0f;
  }
}

absl::Status SyntheticModel::CheckBatch(const Batch& batch) const {
  if (batch.size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic batch size must be > 0, got ", batch.size));
  }
  const int64_t want = batch.size * kFeatureDim;
  if (static_cast<int64_t>(batch.features.size()) != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic batch has ", batch.features.size(), " features, want ", want,
        " (size ", batch.size, " x ", kFeatureDim, ")"));
  }
  return absl::OkStatus();
}

absl::Status SyntheticModel::CheckSpan(const char* what, size_t size) const {
  const int64_t want = layout_.total_elements();
  if (static_cast<int64_t>(size) != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic ", what, " has ", size, " floats, want ", want));
  }
  return absl::OkStatus();
}

void SyntheticModel::BatchMoments(const Batch& batch, double* mean,
                                  double* variance) const {
  double sum = 0;
  for (int64_t i = 0; i < batch.size; ++i) {
    sum += Coefficient(batch.features[i * kFeatureDim]);
  }
  *mean = sum / static_cast<double>(batch.size);
  double sq = 0;
  for (int64_t i = 0; i < batch.size; ++i) {
    const double d = Coefficient(batch.features[i * kFeatureDim]) - *mean;
    sq += d * d;
  }
  *variance = sq / static_cast<double>(batch.size);
}

double SyntheticModel::EmulatedComputeSeconds() const {
  if (UsesProfileCompute()) {
    return (profile_.compute->forward_s + profile_.compute->backward_s) *
           options_.compute_scale;
  }
  return options_.emulated_compute_s;
}

bool SyntheticModel::ScaleEmulatedCompute(double factor) {
  if ((options_.emulated_compute_s <= 0 && !UsesProfileCompute()) ||
      !(factor > 0)) {
    return false;
  }
  compute_scale_ = factor;
  return true;
}

absl::StatusOr<double> SyntheticModel::ForwardBackward(
    const Batch& batch, absl::Span<const float> params, absl::Span<float> grads,
    const GradientReadyFn& on_ready) {
  const double start = NowSeconds();
  RS_RETURN_IF_ERROR(CheckBatch(batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  RS_RETURN_IF_ERROR(CheckSpan("grads", grads.size()));
  double mean = 0, variance = 0;
  BatchMoments(batch, &mean, &variance);
  const float cbar = static_cast<float>(mean);

  // The emulated time: T split at forward_fraction, or the profile's
  // measured forward and backward (and per-tensor ready times).
  double forward_s = 0, backward_s = 0;
  const std::vector<double>* ready_s = nullptr;  // scaled by ready_scale
  double ready_scale = 0;
  if (UsesProfileCompute()) {
    ready_scale = options_.compute_scale * compute_scale_;
    forward_s = profile_.compute->forward_s * ready_scale;
    backward_s = profile_.compute->backward_s * ready_scale;
    if (!profile_.compute->ready_s.empty()) ready_s = &profile_.compute->ready_s;
  } else {
    const double t = options_.emulated_compute_s * compute_scale_;
    forward_s = options_.forward_fraction * t;
    backward_s = t - forward_s;
  }
  const double total_s = forward_s + backward_s;
  const double total = static_cast<double>(layout_.total_elements());
  if (hooks_ != nullptr) {
    // The emulated forward pass, tensor by tensor (it reads no parameter:
    // the hooks mark where a real layer would).
    int64_t seen = 0;
    for (int t = 0; t < layout_.num_tensors(); ++t) {
      if (hooks_->needed) hooks_->needed(t);
      seen += layout_.tensor(t).size;
      if (total_s > 0) SleepUntil(start + forward_s * (seen / total));
      if (hooks_->forward_done) hooks_->forward_done(t);
    }
  }
  int64_t done = 0;  // elements whose gradient is final
  double sq_norm = 0;
  for (int t = layout_.num_tensors() - 1; t >= 0; --t) {
    const TensorSpec& spec = layout_.tensor(t);
    if (hooks_ != nullptr && hooks_->needed) hooks_->needed(t);
    const float* w = params.data() + spec.offset;
    float* g = grads.data() + spec.offset;
    double tensor_sq = 0;
    for (int64_t k = 0; k < spec.size; ++k) {
      const float r = w[k] - cbar * Pattern(spec.offset + k);
      g[k] = r;
      tensor_sq += double{r} * r;
    }
    sq_norm += tensor_sq;
    done += spec.size;
    if (ready_s != nullptr) {
      SleepUntil(start + forward_s +
                 std::min(backward_s, (*ready_s)[t] * ready_scale));
    } else if (total_s > 0) {
      SleepUntil(start + forward_s + backward_s * (done / total));
    }
    if (on_ready) on_ready(t);
  }
  if (total_s > 0) SleepUntil(start + total_s);  // backward's tail
  return 0.5 * (sq_norm + variance * pattern_sq_norm_);
}

absl::StatusOr<double> SyntheticModel::Evaluate(
    const Batch& batch, absl::Span<const float> params) {
  RS_RETURN_IF_ERROR(CheckBatch(batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  double mean = 0, variance = 0;
  BatchMoments(batch, &mean, &variance);
  const float cbar = static_cast<float>(mean);
  // Same arithmetic and order as ForwardBackward, so the losses agree bit
  // for bit.
  double sq_norm = 0;
  for (int t = layout_.num_tensors() - 1; t >= 0; --t) {
    const TensorSpec& spec = layout_.tensor(t);
    const float* w = params.data() + spec.offset;
    double tensor_sq = 0;
    for (int64_t k = 0; k < spec.size; ++k) {
      const float r = w[k] - cbar * Pattern(spec.offset + k);
      tensor_sq += double{r} * r;
    }
    sq_norm += tensor_sq;
  }
  return 0.5 * (sq_norm + variance * pattern_sq_norm_);
}

double SyntheticModel::FlopsPerExample() const {
  return 6.0 * static_cast<double>(layout_.total_elements());
}

}  // namespace ringside
