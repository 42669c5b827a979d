// CharLm: a GPT-2-style decoder-only transformer over characters, trained
// to predict each next character (the workload of the GPT-2 data-parallel
// study, arXiv 2206.06356, at character scale). Token and position
// embeddings, n_layer pre-LayerNorm blocks of causal multi-head
// self-attention and a GELU MLP, a final LayerNorm and an output head tied
// to the token embedding; forward and backward in float32 with Eigen on the
// CPU (charlm_core.h has the arithmetic, charlm_layout.h the tensors, their
// initialization and readiness order).
//
// Batches (models/dataset.h) carry `tokens`: size rows of block_size + 1
// ids in [0, vocab_size) (CharDataset makes them); the loss is the mean
// cross-entropy over all size x block_size predictions.
//
// Thread-compatible: one instance per worker thread.
#ifndef RINGSIDE_MODELS_TRANSFORMER_CHARLM_H_
#define RINGSIDE_MODELS_TRANSFORMER_CHARLM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/model.h"
#include "models/precision.h"
#include "models/transformer/charlm_core.h"
#include "models/transformer/charlm_layout.h"

namespace ringside {

class CharLm : public Model {
 public:
  // INVALID_ARGUMENT on a bad config (CharLmConfig::Validate). In
  // Precision::kBf16 the products' operands are rounded to bfloat16
  // (charlm_core.h): the CUDA model's bf16 arithmetic at float32's speed.
  static absl::StatusOr<std::unique_ptr<CharLm>> Create(
      const CharLmConfig& config, Precision precision = Precision::kFp32);

  std::string name() const override { return "charlm"; }
  const TensorLayout& layout() const override { return core_->layout(); }
  const CharLmConfig& config() const { return core_->config(); }
  Precision precision() const { return core_->precision(); }

  // CharLmInitParams (GPT-2's initialization, seeded).
  void InitParams(uint64_t seed, absl::Span<float> params) const override;

  // Readiness order: CharLmReadinessOrder (ln_f first, wte last).
  // INVALID_ARGUMENT unless batch.size > 0, batch.tokens holds
  // size x (block_size + 1) ids in [0, vocab_size) and the spans have
  // layout().total_elements() floats.
  // Reports parameter use as one unit (models/model.h): needed(i) for every
  // tensor, in layout order, before the pass starts.
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, absl::Span<const float> params,
      absl::Span<float> grads, const GradientReadyFn& on_ready) override;
  bool ReportsParamUse() const override { return true; }
  void SetParamUseHooks(const ParamUseHooks* hooks) override { hooks_ = hooks; }

  // Mean loss over the batch, computed kEvalChunk examples at a time (so a
  // large eval set needs little memory).
  absl::StatusOr<double> Evaluate(const Batch& batch,
                                  absl::Span<const float> params) override;

  double FlopsPerExample() const override {
    return CharLmFlopsPerExample(config());
  }

  // Logits (vocab_size floats) of the token after `context`, which holds 1
  // to block_size ids (generation crops longer contexts to their last
  // block_size). INVALID_ARGUMENT otherwise.
  absl::StatusOr<std::vector<float>> NextTokenLogits(
      absl::Span<const int32_t> context, absl::Span<const float> params);

  static constexpr int64_t kEvalChunk = 64;

 private:
  explicit CharLm(std::unique_ptr<CharLmCore<float>> core)
      : core_(std::move(core)) {}
  absl::Status CheckBatch(const Batch& batch) const;
  absl::Status CheckSpan(const char* what, size_t size) const;

  std::unique_ptr<CharLmCore<float>> core_;
  const ParamUseHooks* hooks_ = nullptr;
};

// INVALID_ARGUMENT unless `batch` holds size > 0 rows of block_size + 1
// tokens in [0, vocab_size) (shared with the CUDA model).
absl::Status CheckCharLmBatch(const CharLmConfig& config, const Batch& batch);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CHARLM_H_
