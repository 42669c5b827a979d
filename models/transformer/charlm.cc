#include "models/transformer/charlm.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {

absl::Status CheckCharLmBatch(const CharLmConfig& config, const Batch& batch) {
  if (batch.size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("charlm batch size must be > 0, got ", batch.size));
  }
  const int64_t row = config.block_size + 1;
  if (static_cast<int64_t>(batch.tokens.size()) != batch.size * row) {
    return absl::InvalidArgumentError(
        absl::StrCat("charlm batch has ", batch.tokens.size(), " tokens, want ",
                     batch.size * row, " (size ", batch.size, " x (block_size ",
                     config.block_size, " + 1))"));
  }
  for (size_t i = 0; i < batch.tokens.size(); ++i) {
    if (batch.tokens[i] < 0 || batch.tokens[i] >= config.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "charlm batch token ", i, " is ", batch.tokens[i],
          ", outside the vocabulary [0, ", config.vocab_size, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CharLm>> CharLm::Create(
    const CharLmConfig& config, Precision precision) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<CharLmCore<float>> core,
                      CharLmCore<float>::Create(config, precision));
  return std::unique_ptr<CharLm>(new CharLm(std::move(core)));
}

void CharLm::InitParams(uint64_t seed, absl::Span<float> params) const {
  CharLmInitParams(config(), layout(), seed, params);
}

absl::Status CharLm::CheckSpan(const char* what, size_t size) const {
  const int64_t want = layout().total_elements();
  if (static_cast<int64_t>(size) != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("charlm ", what, " has ", size, " floats, want ", want));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> CharLm::ForwardBackward(
    const Batch& batch, absl::Span<const float> params, absl::Span<float> grads,
    const GradientReadyFn& on_ready) {
  RS_RETURN_IF_ERROR(CheckCharLmBatch(config(), batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  RS_RETURN_IF_ERROR(CheckSpan("grads", grads.size()));
  if (hooks_ != nullptr && hooks_->needed) {
    for (int t = 0; t < layout().num_tensors(); ++t) hooks_->needed(t);
  }
  return core_->ForwardBackward(batch.tokens.data(), batch.size,
                                config().block_size, params.data(),
                                grads.data(), on_ready);
}

absl::StatusOr<double> CharLm::Evaluate(const Batch& batch,
                                        absl::Span<const float> params) {
  RS_RETURN_IF_ERROR(CheckCharLmBatch(config(), batch));
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  const int64_t row = config().block_size + 1;
  double total = 0;
  for (int64_t begin = 0; begin < batch.size; begin += kEvalChunk) {
    const int64_t count = std::min(kEvalChunk, batch.size - begin);
    total += core_->Loss(batch.tokens.data() + begin * row, count,
                         config().block_size, params.data()) *
             static_cast<double>(count);
  }
  return total / static_cast<double>(batch.size);
}

absl::StatusOr<std::vector<float>> CharLm::NextTokenLogits(
    absl::Span<const int32_t> context, absl::Span<const float> params) {
  RS_RETURN_IF_ERROR(CheckSpan("params", params.size()));
  const int64_t seq = static_cast<int64_t>(context.size());
  if (seq < 1 || seq > config().block_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("charlm context must hold 1 to block_size (",
                     config().block_size, ") tokens, got ", seq));
  }
  for (int32_t id : context) {
    if (id < 0 || id >= config().vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("charlm context token ",
                                                     id, " is outside [0, ",
                                                     config().vocab_size, ")"));
    }
  }
  const float* logits =
      core_->Logits(context.data(), /*batch=*/1, seq, params.data());
  const int64_t v = config().vocab_size;
  return std::vector<float>(logits + (seq - 1) * v, logits + seq * v);
}

}  // namespace ringside
