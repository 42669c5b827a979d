// Random inputs for comparing the character transformer's variants (the
// CUDA model against the CPU one, bf16 against float32): configurations,
// batches of uniform token ids, and parameters larger than GPT-2's init so
// attention is not uniform and every path carries gradient. Header-only
// test helpers.
#ifndef RINGSIDE_TESTS_MODELS_TRANSFORMER_CHARLM_TEST_DATA_H_
#define RINGSIDE_TESTS_MODELS_TRANSFORMER_CHARLM_TEST_DATA_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/tensor_layout.h"
#include "models/dataset.h"
#include "models/transformer/charlm_layout.h"

namespace ringside {
namespace testing {

inline CharLmConfig CharLmTestConfig(int64_t vocab, int64_t layers,
                                     int64_t heads, int64_t embd,
                                     int64_t block) {
  CharLmConfig c;
  c.vocab_size = vocab;
  c.n_layer = layers;
  c.n_head = heads;
  c.n_embd = embd;
  c.block_size = block;
  return c;
}

// `size` rows of block_size + 1 uniform ids, seeded.
inline Batch RandomCharLmBatch(const CharLmConfig& c, int64_t size,
                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, c.vocab_size - 1);
  Batch b;
  b.size = size;
  b.tokens.resize(size * (c.block_size + 1));
  for (int32_t& t : b.tokens) t = id(rng);
  return b;
}

// Uniform in [-0.3, 0.3], LayerNorm weights around 1; seeded.
inline std::vector<float> RandomCharLmParams(const TensorLayout& layout,
                                             uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::vector<float> p(layout.total_elements());
  for (float& v : p) v = u(rng);
  for (int i = 0; i < layout.num_tensors(); ++i) {
    const std::string& name = layout.tensor(i).name;
    if (name.find("ln_") == std::string::npos ||
        name.find(".weight") == std::string::npos) {
      continue;
    }
    for (float& v : layout.View(i, absl::MakeSpan(p))) v += 1.0f;
  }
  return p;
}

}  // namespace testing
}  // namespace ringside

#endif  // RINGSIDE_TESTS_MODELS_TRANSFORMER_CHARLM_TEST_DATA_H_
