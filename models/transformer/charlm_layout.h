// The shape of the character language model (a GPT-2-style decoder-only
// transformer) shared by its CPU (charlm.h) and CUDA
// (cuda/cuda_charlm.h) implementations: the configuration, the tensor
// layout and the index of every tensor in it, the seeded initialization and
// the flop estimate.
//
// Tensors, in layout order (weights are in x out, row-major, as GPT-2's
// Conv1D stores them, so y = x W + b):
//   wte.weight             vocab x n_embd   token embedding, also the
//                                           output head (tied)
//   wpe.weight             block_size x n_embd  position embedding
//   per block l = 0 .. n_layer-1, prefix "h.<l>.":
//     ln_1.weight, ln_1.bias          n_embd
//     attn.c_attn.weight, .bias       n_embd x 3 n_embd, 3 n_embd  (q|k|v)
//     attn.c_proj.weight, .bias       n_embd x n_embd, n_embd
//     ln_2.weight, ln_2.bias          n_embd
//     mlp.c_fc.weight, .bias          n_embd x 4 n_embd, 4 n_embd
//     mlp.c_proj.weight, .bias        4 n_embd x n_embd, n_embd
//   ln_f.weight, ln_f.bias            n_embd
//
// Readiness order (Model contract, models/model.h): ln_f first, then the
// blocks from the last, each from its output back (mlp.c_proj, mlp.c_fc,
// ln_2, attn.c_proj, attn.c_attn, ln_1; weight before bias), then
// wpe.weight and last wte.weight, which the output head and the embedding
// both use (CharLmReadinessOrder).
//
// Thread-safe: pure functions and immutable values.
#ifndef RINGSIDE_MODELS_TRANSFORMER_CHARLM_LAYOUT_H_
#define RINGSIDE_MODELS_TRANSFORMER_CHARLM_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_layout.h"

namespace ringside {

struct CharLmConfig {
  // Tokens (characters) the model reads and predicts; >= 1.
  int64_t vocab_size = 65;
  // Transformer blocks; >= 1.
  int64_t n_layer = 2;
  // Attention heads per block; >= 1 and divides n_embd.
  int64_t n_head = 4;
  // Width of the residual stream; >= 1.
  int64_t n_embd = 64;
  // Context length (positions) in tokens; >= 1.
  int64_t block_size = 32;

  // INVALID_ARGUMENT naming the bad field.
  absl::Status Validate() const;
};

// Index of each tensor in the layout (see the file comment).
struct CharLmTensors {
  static constexpr int kPerBlock = 12;
  enum Block : int {
    kLn1Weight = 0,
    kLn1Bias,
    kAttnWeight,
    kAttnBias,
    kAttnProjWeight,
    kAttnProjBias,
    kLn2Weight,
    kLn2Bias,
    kFcWeight,
    kFcBias,
    kMlpProjWeight,
    kMlpProjBias,
  };
  static constexpr int kWte = 0;
  static constexpr int kWpe = 1;
  static int BlockTensor(int layer, Block which) {
    return 2 + kPerBlock * layer + which;
  }
  static int LnfWeight(int n_layer) { return 2 + kPerBlock * n_layer; }
  static int LnfBias(int n_layer) { return 3 + kPerBlock * n_layer; }
  static int Count(int n_layer) { return 4 + kPerBlock * n_layer; }
};

// The layout of `config` (validated).
absl::StatusOr<TensorLayout> CharLmLayout(const CharLmConfig& config);

// The order in which ForwardBackward reports tensors (file comment).
std::vector<int> CharLmReadinessOrder(int n_layer);

// GPT-2's initialization from a seeded std::mt19937_64: weights and both
// embeddings N(0, 0.02), the residual projections (attn.c_proj,
// mlp.c_proj) N(0, 0.02 / sqrt(2 n_layer)), biases 0, LayerNorm weights 1.
// Same seed => same bits. `params` has layout.total_elements() floats
// (aborts otherwise: a programmer error).
void CharLmInitParams(const CharLmConfig& config, const TensorLayout& layout,
                      uint64_t seed, absl::Span<float> params);

// Floating-point operations of one forward+backward per example (one
// window of block_size positions): 3x the forward's matrix products
// (the linear layers, the attention scores and mixing over the full
// block_size x block_size square, and the tied output head).
double CharLmFlopsPerExample(const CharLmConfig& config);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CHARLM_LAYOUT_H_
