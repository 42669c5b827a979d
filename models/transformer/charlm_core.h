// CharLmCore<Scalar>: the arithmetic of the character transformer
// (charlm_layout.h) on the CPU with Eigen, in float (the CharLm model) or
// double (gradient checks against finite differences).
//
// One forward pass over `batch` sequences of `seq` positions
// (1 <= seq <= block_size): embeddings (wte[token] + wpe[position]),
// n_layer pre-LayerNorm blocks
//   x += c_proj(causal_self_attention(ln_1(x)))
//   x += mlp.c_proj(gelu(mlp.c_fc(ln_2(x))))
// then ln_f and logits = ln_f(x) wte^T. GELU is GPT-2's tanh approximation;
// LayerNorm's epsilon is 1e-5; attention scores are scaled by
// 1/sqrt(n_embd / n_head) and position i attends to positions <= i.
// The loss is the mean cross-entropy over all batch x seq positions of
// predicting token i+1 from tokens 0..i.
//
// Token arrays are row-major: ForwardBackward and Loss read `batch` rows of
// seq+1 tokens (inputs are the first seq, targets the last seq); Logits
// reads `batch` rows of seq inputs. Ids must lie in [0, vocab_size)
// (unchecked here: CharLm checks batches).
//
// In Precision::kBf16 (models/precision.h) every matrix product's operands
// (weights, activations, the attention's q, k, v and probabilities, the
// deltas) are rounded to bfloat16 first and multiplied by the same kernels:
// the CUDA model's bf16 arithmetic up to the order of the sums, at this
// scalar's speed (a numerics reference); everything else is unchanged.
//
// Keeps per-call scratch (activations for backward), grown to the largest
// batch x seq seen. Thread-compatible: one instance per thread.
#ifndef RINGSIDE_MODELS_TRANSFORMER_CHARLM_CORE_H_
#define RINGSIDE_MODELS_TRANSFORMER_CHARLM_CORE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_layout.h"
#include "models/model.h"
#include "models/precision.h"
#include "models/transformer/charlm_layout.h"

namespace ringside {

template <typename Scalar>
class CharLmCore {
 public:
  // INVALID_ARGUMENT if `config` is invalid.
  static absl::StatusOr<std::unique_ptr<CharLmCore>> Create(
      const CharLmConfig& config, Precision precision = Precision::kFp32);

  const CharLmConfig& config() const { return config_; }
  const TensorLayout& layout() const { return layout_; }
  Precision precision() const { return precision_; }

  // Forward and backward; writes d(mean loss)/d(params) into `grads`
  // (layout().total_elements() values, every one overwritten), calls
  // on_ready (may be empty) per tensor in CharLmReadinessOrder once its
  // gradient is final and its parameters will not be read again, and
  // returns the mean loss. Blocking.
  double ForwardBackward(const int32_t* tokens, int64_t batch, int64_t seq,
                         const Scalar* params, Scalar* grads,
                         const GradientReadyFn& on_ready);

  // Mean loss; no gradients. Blocking.
  double Loss(const int32_t* tokens, int64_t batch, int64_t seq,
              const Scalar* params);

  // Logits of every position of `inputs` (batch x seq), row-major
  // (batch * seq) x vocab_size; the pointer is valid until the next call.
  const Scalar* Logits(const int32_t* inputs, int64_t batch, int64_t seq,
                       const Scalar* params);

 private:
  // Activations of one block kept for backward.
  struct BlockCache {
    std::vector<Scalar> ln1_out, ln1_xhat, ln1_rstd;
    std::vector<Scalar> qkv;   // n x 3c
    std::vector<Scalar> att;   // batch x heads x seq x seq (softmax)
    std::vector<Scalar> atty;  // n x c: attention output, heads concatenated
    std::vector<Scalar> ln2_out, ln2_xhat, ln2_rstd;
    std::vector<Scalar> fc_pre, fc_act;  // n x 4c
  };

  CharLmCore(const CharLmConfig& config, TensorLayout layout,
             Precision precision);
  bool bf16() const { return precision_ == Precision::kBf16; }
  void Reserve(int64_t batch, int64_t seq);
  // Fills the caches and logits_ for `batch` rows of `stride` tokens.
  void Forward(const int32_t* tokens, int64_t stride, int64_t batch,
               int64_t seq, const Scalar* params);
  // Summed cross-entropy of logits_ against the targets; with `grad`,
  // logits_ becomes d(mean loss)/d(logits).
  double CrossEntropy(const int32_t* tokens, int64_t batch, int64_t seq,
                      bool grad);
  void AttentionForward(BlockCache& cache, int64_t batch, int64_t seq);
  // d(atty) in datty_ -> d(qkv) in dqkv_.
  void AttentionBackward(const BlockCache& cache, int64_t batch, int64_t seq);

  const Scalar* Param(const Scalar* params, int tensor) const {
    return params + layout_.tensor(tensor).offset;
  }
  Scalar* Grad(Scalar* grads, int tensor) const {
    return grads + layout_.tensor(tensor).offset;
  }

  CharLmConfig config_;
  TensorLayout layout_;
  Precision precision_;
  std::vector<BlockCache> blocks_;
  std::vector<Scalar> resid_;  // n x c residual stream
  std::vector<Scalar> lnf_out_, lnf_xhat_, lnf_rstd_;
  std::vector<Scalar> logits_;  // n x vocab
  // Backward scratch.
  std::vector<Scalar> dresid_, dln_, datty_, dqkv_, dfc_, dp_;
};

extern template class CharLmCore<float>;
extern template class CharLmCore<double>;

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CHARLM_CORE_H_
