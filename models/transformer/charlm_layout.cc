#include "models/transformer/charlm_layout.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

constexpr float kInitStd = 0.02f;

// Cap on every dimension: keeps products of two of them (and the int
// sizes of cuBLAS) far from overflow.
constexpr int64_t kMaxDim = int64_t{1} << 20;

absl::Status CheckRange(const char* name, int64_t value) {
  if (value < 1 || value > kMaxDim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "charlm ", name, " must be in [1, ", kMaxDim, "], got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CharLmConfig::Validate() const {
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"vocab_size", vocab_size},
        {"n_layer", n_layer},
        {"n_head", n_head},
        {"n_embd", n_embd},
        {"block_size", block_size}}) {
    if (absl::Status s = CheckRange(name, value); !s.ok()) return s;
  }
  if (n_layer > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("charlm n_layer must be <= 1024, got ", n_layer));
  }
  if (n_embd % n_head != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "charlm n_head (", n_head, ") must divide n_embd (", n_embd, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorLayout> CharLmLayout(const CharLmConfig& config) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  const int64_t c = config.n_embd;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"wte.weight", {config.vocab_size, c}},
      {"wpe.weight", {config.block_size, c}}};
  for (int64_t l = 0; l < config.n_layer; ++l) {
    const std::string h = absl::StrCat("h.", l, ".");
    shapes.push_back({h + "ln_1.weight", {c}});
    shapes.push_back({h + "ln_1.bias", {c}});
    shapes.push_back({h + "attn.c_attn.weight", {c, 3 * c}});
    shapes.push_back({h + "attn.c_attn.bias", {3 * c}});
    shapes.push_back({h + "attn.c_proj.weight", {c, c}});
    shapes.push_back({h + "attn.c_proj.bias", {c}});
    shapes.push_back({h + "ln_2.weight", {c}});
    shapes.push_back({h + "ln_2.bias", {c}});
    shapes.push_back({h + "mlp.c_fc.weight", {c, 4 * c}});
    shapes.push_back({h + "mlp.c_fc.bias", {4 * c}});
    shapes.push_back({h + "mlp.c_proj.weight", {4 * c, c}});
    shapes.push_back({h + "mlp.c_proj.bias", {c}});
  }
  shapes.push_back({"ln_f.weight", {c}});
  shapes.push_back({"ln_f.bias", {c}});
  return TensorLayout::FromShapes(shapes);
}

std::vector<int> CharLmReadinessOrder(int n_layer) {
  using T = CharLmTensors;
  std::vector<int> order = {T::LnfWeight(n_layer), T::LnfBias(n_layer)};
  for (int l = n_layer - 1; l >= 0; --l) {
    for (T::Block b :
         {T::kMlpProjWeight, T::kMlpProjBias, T::kFcWeight, T::kFcBias,
          T::kLn2Weight, T::kLn2Bias, T::kAttnProjWeight, T::kAttnProjBias,
          T::kAttnWeight, T::kAttnBias, T::kLn1Weight, T::kLn1Bias}) {
      order.push_back(T::BlockTensor(l, b));
    }
  }
  order.push_back(T::kWpe);
  order.push_back(T::kWte);
  return order;
}

void CharLmInitParams(const CharLmConfig& config, const TensorLayout& layout,
                      uint64_t seed, absl::Span<float> params) {
  if (static_cast<int64_t>(params.size()) != layout.total_elements() ||
      layout.num_tensors() != CharLmTensors::Count(config.n_layer)) {
    std::fprintf(stderr,
                 "CharLmInitParams: params has %zu floats and the layout %d "
                 "tensors, want %lld floats and %d tensors\n",
                 params.size(), layout.num_tensors(),
                 static_cast<long long>(layout.total_elements()),
                 CharLmTensors::Count(config.n_layer));
    std::abort();
  }
  using T = CharLmTensors;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, kInitStd);
  std::normal_distribution<float> residual(
      0.0f, kInitStd / std::sqrt(2.0f * static_cast<float>(config.n_layer)));
  auto fill_normal = [&](int tensor, std::normal_distribution<float>& d) {
    for (float& v : layout.View(tensor, params)) v = d(rng);
  };
  auto fill = [&](int tensor, float value) {
    for (float& v : layout.View(tensor, params)) v = value;
  };
  fill_normal(T::kWte, normal);
  fill_normal(T::kWpe, normal);
  for (int l = 0; l < config.n_layer; ++l) {
    fill(T::BlockTensor(l, T::kLn1Weight), 1.0f);
    fill(T::BlockTensor(l, T::kLn1Bias), 0.0f);
    fill_normal(T::BlockTensor(l, T::kAttnWeight), normal);
    fill(T::BlockTensor(l, T::kAttnBias), 0.0f);
    fill_normal(T::BlockTensor(l, T::kAttnProjWeight), residual);
    fill(T::BlockTensor(l, T::kAttnProjBias), 0.0f);
    fill(T::BlockTensor(l, T::kLn2Weight), 1.0f);
    fill(T::BlockTensor(l, T::kLn2Bias), 0.0f);
    fill_normal(T::BlockTensor(l, T::kFcWeight), normal);
    fill(T::BlockTensor(l, T::kFcBias), 0.0f);
    fill_normal(T::BlockTensor(l, T::kMlpProjWeight), residual);
    fill(T::BlockTensor(l, T::kMlpProjBias), 0.0f);
  }
  fill(T::LnfWeight(config.n_layer), 1.0f);
  fill(T::LnfBias(config.n_layer), 0.0f);
}

double CharLmFlopsPerExample(const CharLmConfig& config) {
  const double c = static_cast<double>(config.n_embd);
  const double t = static_cast<double>(config.block_size);
  const double v = static_cast<double>(config.vocab_size);
  const double layers = static_cast<double>(config.n_layer);
  // Forward, per position: 2 flops per weight of the linear layers
  // (3c^2 + c^2 + 4c^2 + 4c^2 = 12c^2 per block) and of the head (v c),
  // plus q k^T and att v over t positions (2 * 2 t c per block).
  const double forward_per_position =
      layers * (2.0 * 12.0 * c * c + 4.0 * t * c) + 2.0 * v * c;
  // Backward computes two products per forward product.
  return 3.0 * forward_per_position * t;
}

}  // namespace ringside
