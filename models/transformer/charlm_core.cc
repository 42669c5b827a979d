#include "models/transformer/charlm_core.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <utility>

#include "common/status_macros.h"
#include "models/precision.h"

namespace ringside {
namespace {

using T = CharLmTensors;

template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using Row = Eigen::Matrix<S, 1, Eigen::Dynamic>;
template <typename S>
using MapM = Eigen::Map<Mat<S>>;
template <typename S>
using CMapM = Eigen::Map<const Mat<S>>;
// A column block of a row-major matrix: rows of `cols` values, `stride`
// apart.
template <typename S>
using SMapM = Eigen::Map<Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using CSMapM = Eigen::Map<const Mat<S>, 0, Eigen::OuterStride<>>;
template <typename S>
using MapR = Eigen::Map<Row<S>>;
template <typename S>
using CMapR = Eigen::Map<const Row<S>>;

constexpr double kLayerNormEps = 1e-5;
// GPT-2's GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

template <typename S>
void Resize(std::vector<S>& v, int64_t n) {
  v.resize(static_cast<size_t>(n));
}

// out, xhat (rows x c), rstd (rows) from x.
template <typename S>
void LayerNormForward(const S* x, const S* w, const S* b, int64_t rows,
                      int64_t c, S* out, S* xhat, S* rstd) {
  const S inv_c = S(1) / static_cast<S>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const S* xr = x + r * c;
    S mean = 0;
    for (int64_t j = 0; j < c; ++j) mean += xr[j];
    mean *= inv_c;
    S var = 0;
    for (int64_t j = 0; j < c; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var *= inv_c;
    const S rs = S(1) / std::sqrt(var + static_cast<S>(kLayerNormEps));
    rstd[r] = rs;
    S* hr = xhat + r * c;
    S* outr = out + r * c;
    for (int64_t j = 0; j < c; ++j) {
      hr[j] = (xr[j] - mean) * rs;
      outr[j] = hr[j] * w[j] + b[j];
    }
  }
}

// dx += d(input) for d(out) = dout; dw, db overwritten.
template <typename S>
void LayerNormBackward(const S* dout, const S* xhat, const S* rstd, const S* w,
                       int64_t rows, int64_t c, S* dx, S* dw, S* db) {
  std::fill(dw, dw + c, S(0));
  std::fill(db, db + c, S(0));
  const S inv_c = S(1) / static_cast<S>(c);
  for (int64_t r = 0; r < rows; ++r) {
    const S* dr = dout + r * c;
    const S* hr = xhat + r * c;
    S mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (int64_t j = 0; j < c; ++j) {
      const S dxhat = dr[j] * w[j];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * hr[j];
      dw[j] += dr[j] * hr[j];
      db[j] += dr[j];
    }
    mean_dxhat *= inv_c;
    mean_dxhat_xhat *= inv_c;
    S* dxr = dx + r * c;
    for (int64_t j = 0; j < c; ++j) {
      dxr[j] += rstd[r] * (dr[j] * w[j] - mean_dxhat - hr[j] * mean_dxhat_xhat);
    }
  }
}

// A value rounded to bfloat16 and back: a bf16 product's operand.
template <typename S>
struct RoundBf16Op {
  S operator()(S v) const {
    return static_cast<S>(RoundToBf16(static_cast<float>(v)));
  }
};

// dst = a b, or dst += a b with `accumulate`; with `bf16`, of a's and b's
// values rounded to bfloat16 (evaluated into temporaries, then the same
// product).
template <typename Dst, typename A, typename B>
void Product(bool bf16, bool accumulate, Dst&& dst, const A& a, const B& b) {
  using S = typename A::Scalar;
  if (bf16) {
    const auto ra = a.unaryExpr(RoundBf16Op<S>());
    const auto rb = b.unaryExpr(RoundBf16Op<S>());
    if (accumulate) {
      dst.noalias() += ra * rb;
    } else {
      dst.noalias() = ra * rb;
    }
  } else if (accumulate) {
    dst.noalias() += a * b;
  } else {
    dst.noalias() = a * b;
  }
}

// out (rows x o) = in (rows x i) W (i x o) + b, or += with `accumulate`.
template <typename S>
void Linear(bool bf16, const S* in, int64_t rows, int64_t i, const S* w,
            const S* b, int64_t o, S* out, bool accumulate) {
  MapM<S> y(out, rows, o);
  Product(bf16, accumulate, y, CMapM<S>(in, rows, i), CMapM<S>(w, i, o));
  y.rowwise() += CMapR<S>(b, o);
}

// dW = in^T dout, db = column sums of dout; dW, db overwritten.
template <typename S>
void LinearParamGrads(bool bf16, const S* in, const S* dout, int64_t rows,
                      int64_t i, int64_t o, S* dw, S* db) {
  CMapM<S> d(dout, rows, o);
  Product(bf16, false, MapM<S>(dw, i, o), CMapM<S>(in, rows, i).transpose(), d);
  MapR<S>(db, o) = d.colwise().sum();
}

// din (rows x i) = dout (rows x o) W^T.
template <typename S>
void LinearInputGrad(bool bf16, const S* dout, const S* w, int64_t rows,
                     int64_t i, int64_t o, S* din) {
  Product(bf16, false, MapM<S>(din, rows, i), CMapM<S>(dout, rows, o),
          CMapM<S>(w, i, o).transpose());
}

// Eigen's array tanh is vectorized (a rational approximation for float,
// std::tanh's accuracy); GELU is a large share of the step otherwise.
template <typename S>
void GeluForward(const S* x, S* y, int64_t n) {
  const S k = static_cast<S>(kGeluScale);
  const S a = static_cast<S>(kGeluCubic);
  Eigen::Map<const Eigen::Array<S, Eigen::Dynamic, 1>> v(x, n);
  Eigen::Map<Eigen::Array<S, Eigen::Dynamic, 1>>(y, n) =
      S(0.5) * v * (S(1) + (k * (v + a * v.cube())).tanh());
}

// dy *= gelu'(x).
template <typename S>
void GeluBackward(const S* x, S* dy, int64_t n) {
  const S k = static_cast<S>(kGeluScale);
  const S a = static_cast<S>(kGeluCubic);
  Eigen::Map<const Eigen::Array<S, Eigen::Dynamic, 1>> v(x, n);
  Eigen::Map<Eigen::Array<S, Eigen::Dynamic, 1>> d(dy, n);
  const Eigen::Array<S, Eigen::Dynamic, 1> th = (k * (v + a * v.cube())).tanh();
  d *= S(0.5) * (S(1) + th) +
       S(0.5) * v * (S(1) - th.square()) * k * (S(1) + S(3) * a * v.square());
}

}  // namespace

template <typename Scalar>
absl::StatusOr<std::unique_ptr<CharLmCore<Scalar>>> CharLmCore<Scalar>::Create(
    const CharLmConfig& config, Precision precision) {
  RS_ASSIGN_OR_RETURN(TensorLayout layout, CharLmLayout(config));
  return std::unique_ptr<CharLmCore>(
      new CharLmCore(config, std::move(layout), precision));
}

template <typename Scalar>
CharLmCore<Scalar>::CharLmCore(const CharLmConfig& config, TensorLayout layout,
                               Precision precision)
    : config_(config),
      layout_(std::move(layout)),
      precision_(precision),
      blocks_(config.n_layer) {}

template <typename Scalar>
void CharLmCore<Scalar>::Reserve(int64_t batch, int64_t seq) {
  const int64_t n = batch * seq;
  const int64_t c = config_.n_embd;
  for (BlockCache& b : blocks_) {
    Resize(b.ln1_out, n * c);
    Resize(b.ln1_xhat, n * c);
    Resize(b.ln1_rstd, n);
    Resize(b.qkv, n * 3 * c);
    Resize(b.att, batch * config_.n_head * seq * seq);
    Resize(b.atty, n * c);
    Resize(b.ln2_out, n * c);
    Resize(b.ln2_xhat, n * c);
    Resize(b.ln2_rstd, n);
    Resize(b.fc_pre, n * 4 * c);
    Resize(b.fc_act, n * 4 * c);
  }
  Resize(resid_, n * c);
  Resize(lnf_out_, n * c);
  Resize(lnf_xhat_, n * c);
  Resize(lnf_rstd_, n);
  Resize(logits_, n * config_.vocab_size);
}

template <typename Scalar>
void CharLmCore<Scalar>::AttentionForward(BlockCache& cache, int64_t batch,
                                          int64_t seq) {
  const int64_t c = config_.n_embd;
  const int64_t heads = config_.n_head;
  const int64_t hs = c / heads;
  const Scalar scale = Scalar(1) / std::sqrt(static_cast<Scalar>(hs));
  for (int64_t b = 0; b < batch; ++b) {
    const Scalar* rows = cache.qkv.data() + b * seq * 3 * c;
    for (int64_t h = 0; h < heads; ++h) {
      CSMapM<Scalar> q(rows + h * hs, seq, hs, Eigen::OuterStride<>(3 * c));
      CSMapM<Scalar> k(rows + c + h * hs, seq, hs, Eigen::OuterStride<>(3 * c));
      CSMapM<Scalar> v(rows + 2 * c + h * hs, seq, hs,
                       Eigen::OuterStride<>(3 * c));
      MapM<Scalar> p(cache.att.data() + (b * heads + h) * seq * seq, seq, seq);
      Product(bf16(), false, p, q, k.transpose());
      // Causal softmax of each row over positions j <= i; zeros beyond.
      for (int64_t i = 0; i < seq; ++i) {
        Scalar* pr = p.data() + i * seq;
        Scalar max = pr[0] * scale;
        for (int64_t j = 0; j <= i; ++j) max = std::max(max, pr[j] * scale);
        Scalar sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          pr[j] = std::exp(pr[j] * scale - max);
          sum += pr[j];
        }
        const Scalar inv = Scalar(1) / sum;
        for (int64_t j = 0; j <= i; ++j) pr[j] *= inv;
        for (int64_t j = i + 1; j < seq; ++j) pr[j] = 0;
      }
      SMapM<Scalar> y(cache.atty.data() + b * seq * c + h * hs, seq, hs,
                      Eigen::OuterStride<>(c));
      Product(bf16(), false, y, p, v);
    }
  }
}

template <typename Scalar>
void CharLmCore<Scalar>::AttentionBackward(const BlockCache& cache,
                                           int64_t batch, int64_t seq) {
  const int64_t c = config_.n_embd;
  const int64_t heads = config_.n_head;
  const int64_t hs = c / heads;
  const Scalar scale = Scalar(1) / std::sqrt(static_cast<Scalar>(hs));
  Resize(dp_, seq * seq);
  for (int64_t b = 0; b < batch; ++b) {
    const Scalar* rows = cache.qkv.data() + b * seq * 3 * c;
    Scalar* drows = dqkv_.data() + b * seq * 3 * c;
    for (int64_t h = 0; h < heads; ++h) {
      const Eigen::OuterStride<> s3(3 * c);
      CSMapM<Scalar> q(rows + h * hs, seq, hs, s3);
      CSMapM<Scalar> k(rows + c + h * hs, seq, hs, s3);
      CSMapM<Scalar> v(rows + 2 * c + h * hs, seq, hs, s3);
      SMapM<Scalar> dq(drows + h * hs, seq, hs, s3);
      SMapM<Scalar> dk(drows + c + h * hs, seq, hs, s3);
      SMapM<Scalar> dv(drows + 2 * c + h * hs, seq, hs, s3);
      CMapM<Scalar> p(cache.att.data() + (b * heads + h) * seq * seq, seq, seq);
      CSMapM<Scalar> dy(datty_.data() + b * seq * c + h * hs, seq, hs,
                        Eigen::OuterStride<>(c));
      MapM<Scalar> dp(dp_.data(), seq, seq);
      Product(bf16(), false, dv, p.transpose(), dy);
      Product(bf16(), false, dp, dy, v.transpose());
      // Softmax backward: ds_ij = p_ij (dp_ij - sum_k p_ik dp_ik), times the
      // score scale; p_ij = 0 above the diagonal, so ds is causal too.
      for (int64_t i = 0; i < seq; ++i) {
        const Scalar* pr = p.data() + i * seq;
        Scalar* dr = dp.data() + i * seq;
        Scalar dot = 0;
        for (int64_t j = 0; j <= i; ++j) dot += pr[j] * dr[j];
        for (int64_t j = 0; j <= i; ++j) dr[j] = pr[j] * (dr[j] - dot) * scale;
        for (int64_t j = i + 1; j < seq; ++j) dr[j] = 0;
      }
      Product(bf16(), false, dq, dp, k);
      Product(bf16(), false, dk, dp.transpose(), q);
    }
  }
}

template <typename Scalar>
void CharLmCore<Scalar>::Forward(const int32_t* tokens, int64_t stride,
                                 int64_t batch, int64_t seq,
                                 const Scalar* params) {
  Reserve(batch, seq);
  const int64_t n = batch * seq;
  const int64_t c = config_.n_embd;
  const Scalar* wte = Param(params, T::kWte);
  const Scalar* wpe = Param(params, T::kWpe);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < seq; ++i) {
      const Scalar* e = wte + tokens[b * stride + i] * c;
      const Scalar* p = wpe + i * c;
      Scalar* x = resid_.data() + (b * seq + i) * c;
      for (int64_t j = 0; j < c; ++j) x[j] = e[j] + p[j];
    }
  }
  for (int l = 0; l < config_.n_layer; ++l) {
    BlockCache& k = blocks_[l];
    auto P = [&](T::Block which) {
      return Param(params, T::BlockTensor(l, which));
    };
    LayerNormForward(resid_.data(), P(T::kLn1Weight), P(T::kLn1Bias), n, c,
                     k.ln1_out.data(), k.ln1_xhat.data(), k.ln1_rstd.data());
    Linear(bf16(), k.ln1_out.data(), n, c, P(T::kAttnWeight), P(T::kAttnBias),
           3 * c, k.qkv.data(), /*accumulate=*/false);
    AttentionForward(k, batch, seq);
    Linear(bf16(), k.atty.data(), n, c, P(T::kAttnProjWeight),
           P(T::kAttnProjBias), c, resid_.data(), /*accumulate=*/true);
    LayerNormForward(resid_.data(), P(T::kLn2Weight), P(T::kLn2Bias), n, c,
                     k.ln2_out.data(), k.ln2_xhat.data(), k.ln2_rstd.data());
    Linear(bf16(), k.ln2_out.data(), n, c, P(T::kFcWeight), P(T::kFcBias),
           4 * c, k.fc_pre.data(), /*accumulate=*/false);
    GeluForward(k.fc_pre.data(), k.fc_act.data(), n * 4 * c);
    Linear(bf16(), k.fc_act.data(), n, 4 * c, P(T::kMlpProjWeight),
           P(T::kMlpProjBias), c, resid_.data(), /*accumulate=*/true);
  }
  const int L = static_cast<int>(config_.n_layer);
  LayerNormForward(resid_.data(), Param(params, T::LnfWeight(L)),
                   Param(params, T::LnfBias(L)), n, c, lnf_out_.data(),
                   lnf_xhat_.data(), lnf_rstd_.data());
  Product(bf16(), false, MapM<Scalar>(logits_.data(), n, config_.vocab_size),
          CMapM<Scalar>(lnf_out_.data(), n, c),
          CMapM<Scalar>(wte, config_.vocab_size, c).transpose());
}

template <typename Scalar>
double CharLmCore<Scalar>::CrossEntropy(const int32_t* tokens, int64_t batch,
                                        int64_t seq, bool grad) {
  const int64_t v = config_.vocab_size;
  const int64_t n = batch * seq;
  const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n);
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < seq; ++i) {
      const int32_t target = tokens[b * (seq + 1) + i + 1];
      Scalar* z = logits_.data() + (b * seq + i) * v;
      Scalar max = z[0];
      for (int64_t j = 1; j < v; ++j) max = std::max(max, z[j]);
      Scalar sum = 0;
      for (int64_t j = 0; j < v; ++j) sum += std::exp(z[j] - max);
      const Scalar lse = max + std::log(sum);
      total += static_cast<double>(lse - z[target]);
      if (grad) {
        for (int64_t j = 0; j < v; ++j) z[j] = std::exp(z[j] - lse) * inv_n;
        z[target] -= inv_n;
      }
    }
  }
  return total;
}

template <typename Scalar>
double CharLmCore<Scalar>::ForwardBackward(const int32_t* tokens, int64_t batch,
                                           int64_t seq, const Scalar* params,
                                           Scalar* grads,
                                           const GradientReadyFn& on_ready) {
  Forward(tokens, seq + 1, batch, seq, params);
  const double loss = CrossEntropy(tokens, batch, seq, /*grad=*/true) /
                      static_cast<double>(batch * seq);
  auto ready = [&](int tensor) {
    if (on_ready) on_ready(tensor);
  };
  const int64_t n = batch * seq;
  const int64_t c = config_.n_embd;
  const int64_t v = config_.vocab_size;
  const int L = static_cast<int>(config_.n_layer);
  Resize(dresid_, n * c);
  Resize(dln_, n * c);
  Resize(datty_, n * c);
  Resize(dqkv_, n * 3 * c);
  Resize(dfc_, n * 4 * c);

  // Output head (tied): logits = lnf_out wte^T. The embedding adds to
  // wte's gradient at the end.
  CMapM<Scalar> dlogits(logits_.data(), n, v);
  const Scalar* wte = Param(params, T::kWte);
  Product(bf16(), false, MapM<Scalar>(Grad(grads, T::kWte), v, c),
          dlogits.transpose(), CMapM<Scalar>(lnf_out_.data(), n, c));
  Product(bf16(), false, MapM<Scalar>(dln_.data(), n, c), dlogits,
          CMapM<Scalar>(wte, v, c));
  std::fill(dresid_.begin(), dresid_.end(), Scalar(0));
  LayerNormBackward(dln_.data(), lnf_xhat_.data(), lnf_rstd_.data(),
                    Param(params, T::LnfWeight(L)), n, c, dresid_.data(),
                    Grad(grads, T::LnfWeight(L)), Grad(grads, T::LnfBias(L)));
  ready(T::LnfWeight(L));
  ready(T::LnfBias(L));

  for (int l = L - 1; l >= 0; --l) {
    const BlockCache& k = blocks_[l];
    auto P = [&](T::Block which) {
      return Param(params, T::BlockTensor(l, which));
    };
    auto G = [&](T::Block which) {
      return Grad(grads, T::BlockTensor(l, which));
    };
    auto ready_pair = [&](T::Block weight, T::Block bias) {
      ready(T::BlockTensor(l, weight));
      ready(T::BlockTensor(l, bias));
    };
    // x += mlp.c_proj(gelu(c_fc(ln_2(x)))).
    LinearParamGrads(bf16(), k.fc_act.data(), dresid_.data(), n, 4 * c, c,
                     G(T::kMlpProjWeight), G(T::kMlpProjBias));
    LinearInputGrad(bf16(), dresid_.data(), P(T::kMlpProjWeight), n, 4 * c, c,
                    dfc_.data());
    ready_pair(T::kMlpProjWeight, T::kMlpProjBias);
    GeluBackward(k.fc_pre.data(), dfc_.data(), n * 4 * c);
    LinearParamGrads(bf16(), k.ln2_out.data(), dfc_.data(), n, c, 4 * c,
                     G(T::kFcWeight), G(T::kFcBias));
    LinearInputGrad(bf16(), dfc_.data(), P(T::kFcWeight), n, c, 4 * c,
                    dln_.data());
    ready_pair(T::kFcWeight, T::kFcBias);
    LayerNormBackward(dln_.data(), k.ln2_xhat.data(), k.ln2_rstd.data(),
                      P(T::kLn2Weight), n, c, dresid_.data(), G(T::kLn2Weight),
                      G(T::kLn2Bias));
    ready_pair(T::kLn2Weight, T::kLn2Bias);
    // x += attn.c_proj(attention(c_attn(ln_1(x)))).
    LinearParamGrads(bf16(), k.atty.data(), dresid_.data(), n, c, c,
                     G(T::kAttnProjWeight), G(T::kAttnProjBias));
    LinearInputGrad(bf16(), dresid_.data(), P(T::kAttnProjWeight), n, c, c,
                    datty_.data());
    ready_pair(T::kAttnProjWeight, T::kAttnProjBias);
    AttentionBackward(k, batch, seq);
    LinearParamGrads(bf16(), k.ln1_out.data(), dqkv_.data(), n, c, 3 * c,
                     G(T::kAttnWeight), G(T::kAttnBias));
    LinearInputGrad(bf16(), dqkv_.data(), P(T::kAttnWeight), n, c, 3 * c,
                    dln_.data());
    ready_pair(T::kAttnWeight, T::kAttnBias);
    LayerNormBackward(dln_.data(), k.ln1_xhat.data(), k.ln1_rstd.data(),
                      P(T::kLn1Weight), n, c, dresid_.data(), G(T::kLn1Weight),
                      G(T::kLn1Bias));
    ready_pair(T::kLn1Weight, T::kLn1Bias);
  }

  // Embeddings: x = wte[token] + wpe[position].
  Scalar* dwpe = Grad(grads, T::kWpe);
  std::fill(dwpe, dwpe + config_.block_size * c, Scalar(0));
  Scalar* dwte = Grad(grads, T::kWte);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < seq; ++i) {
      const Scalar* d = dresid_.data() + (b * seq + i) * c;
      Scalar* p = dwpe + i * c;
      for (int64_t j = 0; j < c; ++j) p[j] += d[j];
    }
  }
  ready(T::kWpe);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < seq; ++i) {
      const Scalar* d = dresid_.data() + (b * seq + i) * c;
      Scalar* e = dwte + tokens[b * (seq + 1) + i] * c;
      for (int64_t j = 0; j < c; ++j) e[j] += d[j];
    }
  }
  ready(T::kWte);
  return loss;
}

template <typename Scalar>
double CharLmCore<Scalar>::Loss(const int32_t* tokens, int64_t batch,
                                int64_t seq, const Scalar* params) {
  Forward(tokens, seq + 1, batch, seq, params);
  return CrossEntropy(tokens, batch, seq, /*grad=*/false) /
         static_cast<double>(batch * seq);
}

template <typename Scalar>
const Scalar* CharLmCore<Scalar>::Logits(const int32_t* inputs, int64_t batch,
                                         int64_t seq, const Scalar* params) {
  Forward(inputs, seq, batch, seq, params);
  return logits_.data();
}

template class CharLmCore<float>;
template class CharLmCore<double>;

}  // namespace ringside
