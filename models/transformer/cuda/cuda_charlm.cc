// CudaCharLm with cuBLAS and our kernels (--config=cuda).
#include "models/transformer/cuda/cuda_charlm.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"
#include "device/device_buffer.h"
#include "models/cuda/gemm.h"
#include "models/cuda/model_handles.h"
#include "models/transformer/charlm.h"
#include "models/transformer/cuda/charlm_kernels.h"

namespace ringside {
namespace {

namespace k = charlm_kernels;
using T = CharLmTensors;

static_assert(sizeof(int32_t) == sizeof(float), "tokens_ holds int32 ids");

class CudaCharLmImpl final : public CudaCharLm {
 public:
  CudaCharLmImpl(const CharLmConfig& config, TensorLayout layout, int device,
                 Precision precision)
      : config_(config),
        layout_(std::move(layout)),
        device_(device),
        precision_(precision) {}

  // Handle and events; called once by Create.
  absl::Status Init() { return handles_.Init(device_, layout_.num_tensors()); }

  const CharLmConfig& config() const override { return config_; }
  const TensorLayout& layout() const override { return layout_; }
  int device() const override { return device_; }
  Precision precision() const override { return precision_; }

  void InitParams(uint64_t seed, absl::Span<float> host_params) const override {
    CharLmInitParams(config_, layout_, seed, host_params);
  }

  absl::Status InitDeviceParams(uint64_t seed, float* d_params) const override {
    if (d_params == nullptr) {
      return absl::InvalidArgumentError("CudaCharLm: d_params is null");
    }
    std::vector<float> params(layout_.total_elements());
    InitParams(seed, absl::MakeSpan(params));
    RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return CopyToDevice(params, d_params);
  }

  absl::StatusOr<double> ForwardBackward(const Batch& batch,
                                         const float* d_params, float* d_grads,
                                         const GradientReadyFn& on_ready,
                                         CudaStream stream) override {
    RS_RETURN_IF_ERROR(Prepare(batch, d_params, batch.size, stream));
    if (d_grads == nullptr) {
      return absl::InvalidArgumentError("CudaCharLm: d_grads is null");
    }
    const int64_t b = batch.size;
    RS_RETURN_IF_ERROR(Upload(batch, 0, b, stream));
    RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(handles_.start(), stream));
    // Parameter use as one unit, before the first kernel that reads any.
    if (hooks_ != nullptr && hooks_->needed) {
      for (int t = 0; t < layout_.num_tensors(); ++t) hooks_->needed(t);
    }
    RS_RETURN_IF_ERROR(Forward(b, d_params, stream));
    const int64_t n = b * config_.block_size;
    RS_CUDA_RETURN_IF_ERROR(k::LaunchCrossEntropy(
        logits_.data(), row_loss_.data(), tokens(), config_.block_size + 1, b,
        config_.block_size, config_.vocab_size, 1.0f / static_cast<float>(n),
        /*want_gradient=*/true, stream));
    // Gradient memory as one unit, before the first kernel that writes any.
    if (hooks_ != nullptr && hooks_->writes_gradient) {
      for (int t = 0; t < layout_.num_tensors(); ++t) {
        hooks_->writes_gradient(t);
      }
    }
    RS_RETURN_IF_ERROR(Backward(b, d_params, d_grads, on_ready, stream));
    RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(handles_.stop(), stream));
    RS_ASSIGN_OR_RETURN(const double total, SumLoss(n, stream));
    RS_ASSIGN_OR_RETURN(compute_seconds_, handles_.ElapsedSeconds());
    return total / static_cast<double>(n);
  }

  absl::StatusOr<double> Evaluate(const Batch& batch, const float* d_params,
                                  CudaStream stream) override {
    RS_RETURN_IF_ERROR(Prepare(
        batch, d_params, std::min(batch.size, CharLm::kEvalChunk), stream));
    double total = 0;
    for (int64_t begin = 0; begin < batch.size; begin += CharLm::kEvalChunk) {
      const int64_t count = std::min(CharLm::kEvalChunk, batch.size - begin);
      RS_RETURN_IF_ERROR(Upload(batch, begin, count, stream));
      RS_RETURN_IF_ERROR(Forward(count, d_params, stream));
      const int64_t n = count * config_.block_size;
      RS_CUDA_RETURN_IF_ERROR(k::LaunchCrossEntropy(
          logits_.data(), row_loss_.data(), tokens(), config_.block_size + 1,
          count, config_.block_size, config_.vocab_size, 1.0f,
          /*want_gradient=*/false, stream));
      RS_ASSIGN_OR_RETURN(const double part, SumLoss(n, stream));
      total += part;
    }
    return total / static_cast<double>(batch.size * config_.block_size);
  }

  CudaEvent grad_ready_event(int tensor) const override {
    return handles_.ready(tensor);
  }

  double last_compute_seconds() const override { return compute_seconds_; }

 private:
  // Activations of one block kept for backward.
  struct BlockBuffers {
    DeviceBuffer resid_in;  // n x c, the block's input
    DeviceBuffer ln1_out, ln1_mean, ln1_rstd;
    DeviceBuffer q, k, v;    // (b, heads, seq, hs)
    DeviceBuffer att;        // (b, heads, seq, seq) softmax
    DeviceBuffer atty;       // n x c, heads merged
    DeviceBuffer resid_mid;  // n x c, after attention
    DeviceBuffer ln2_out, ln2_mean, ln2_rstd;
    DeviceBuffer fc_pre, fc_act;  // n x 4c
  };

  int32_t* tokens() { return reinterpret_cast<int32_t*>(tokens_.data()); }
  const float* P(const float* params, int tensor) const {
    return params + layout_.tensor(tensor).offset;
  }
  float* G(float* grads, int tensor) const {
    return grads + layout_.tensor(tensor).offset;
  }

  // Checks, makes the device current, grows the scratch to `examples` per
  // forward, binds cuBLAS to `stream`.
  absl::Status Prepare(const Batch& batch, const float* d_params,
                       int64_t examples, cudaStream_t stream) {
    RS_RETURN_IF_ERROR(CheckCharLmBatch(config_, batch));
    if (d_params == nullptr) {
      return absl::InvalidArgumentError("CudaCharLm: d_params is null");
    }
    // cuBLAS takes int sizes; the largest is (b * block_size) x 4 n_embd
    // rows of the MLP and b * heads * block_size^2 of the scores.
    const double rows = static_cast<double>(examples) * config_.block_size;
    if (rows * 4 * config_.n_embd > INT_MAX ||
        rows * config_.n_head * config_.block_size > INT_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cuda charlm batch of ", examples, " is too large for int sizes"));
    }
    RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    RS_RETURN_IF_ERROR(Reserve(examples));
    RS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(handles_.cublas(), stream));
    return absl::OkStatus();
  }

  // Copies examples [begin, begin + count) of the batch's tokens in.
  absl::Status Upload(const Batch& batch, int64_t begin, int64_t count,
                      cudaStream_t stream) {
    const int64_t row = config_.block_size + 1;
    // Pageable source: returns once the data is staged.
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        tokens(), batch.tokens.data() + begin * row,
        count * row * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
    return absl::OkStatus();
  }

  absl::Status Reserve(int64_t batch) {
    if (batch <= capacity_) return absl::OkStatus();
    const int64_t n = batch * config_.block_size;
    const int64_t c = config_.n_embd;
    const int64_t scores =
        batch * config_.n_head * config_.block_size * config_.block_size;
    auto make = [&](DeviceBuffer& buf, int64_t floats) -> absl::Status {
      RS_ASSIGN_OR_RETURN(buf, DeviceBuffer::Create(device_, floats));
      return absl::OkStatus();
    };
    blocks_.resize(config_.n_layer);
    for (BlockBuffers& bb : blocks_) {
      for (auto [buf, floats] :
           {std::pair<DeviceBuffer*, int64_t>{&bb.resid_in, n * c},
            {&bb.ln1_out, n * c},
            {&bb.ln1_mean, n},
            {&bb.ln1_rstd, n},
            {&bb.q, n * c},
            {&bb.k, n * c},
            {&bb.v, n * c},
            {&bb.att, scores},
            {&bb.atty, n * c},
            {&bb.resid_mid, n * c},
            {&bb.ln2_out, n * c},
            {&bb.ln2_mean, n},
            {&bb.ln2_rstd, n},
            {&bb.fc_pre, n * 4 * c},
            {&bb.fc_act, n * 4 * c}}) {
        RS_RETURN_IF_ERROR(make(*buf, floats));
      }
    }
    for (auto [buf, floats] :
         {std::pair<DeviceBuffer*, int64_t>{&tokens_,
                                            batch * (config_.block_size + 1)},
          {&resid_out_, n * c},
          {&lnf_out_, n * c},
          {&lnf_mean_, n},
          {&lnf_rstd_, n},
          {&logits_, n * config_.vocab_size},
          {&row_loss_, n},
          {&qkv_, n * 3 * c},
          {&tmp_, n * c},
          {&yp_, n * c},
          {&dresid_, n * c},
          {&dln_, n * c},
          {&dfc_, n * 4 * c},
          {&dyp_, n * c},
          {&dqp_, n * c},
          {&dkp_, n * c},
          {&dvp_, n * c},
          {&dp_, scores},
          {&dqkv_, n * 3 * c},
          {&ln_scratch_, k::LayerNormParamScratchFloats(n, c)}}) {
      RS_RETURN_IF_ERROR(make(*buf, floats));
    }
    if (bf16()) {
      // Each slot holds the largest operand: an activation (up to n x 4c),
      // the attention scores, the logits or a weight (up to 4c x c).
      const int64_t largest =
          std::max({n * 4 * c, scores, n * config_.vocab_size,
                    config_.vocab_size * c, 4 * c * c});
      RS_RETURN_IF_ERROR(bf16_slots_.Reserve(device_, 2, largest));
    }
    host_row_loss_.resize(n);
    capacity_ = batch;
    return absl::OkStatus();
  }

  absl::Status Forward(int64_t batch, const float* params,
                       cudaStream_t stream) {
    const int64_t seq = config_.block_size;
    const int64_t n = batch * seq;
    const int64_t c = config_.n_embd;
    const int64_t heads = config_.n_head;
    const int64_t hs = c / heads;
    const int64_t bh = batch * heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    const int L = static_cast<int>(config_.n_layer);
    RS_CUDA_RETURN_IF_ERROR(k::LaunchEmbeddingForward(
        blocks_[0].resid_in.data(), tokens(), seq + 1, P(params, T::kWte),
        P(params, T::kWpe), batch, seq, c, stream));
    for (int l = 0; l < L; ++l) {
      BlockBuffers& bb = blocks_[l];
      auto W = [&](T::Block which) {
        return P(params, T::BlockTensor(l, which));
      };
      RS_CUDA_RETURN_IF_ERROR(k::LaunchLayerNormForward(
          bb.ln1_out.data(), bb.ln1_mean.data(), bb.ln1_rstd.data(),
          bb.resid_in.data(), W(T::kLn1Weight), W(T::kLn1Bias), n, c, stream));
      RS_RETURN_IF_ERROR(Linear(bb.ln1_out.data(), W(T::kAttnWeight), n, c,
                                3 * c, qkv_.data(), stream));
      RS_CUDA_RETURN_IF_ERROR(
          k::LaunchAddBias(qkv_.data(), W(T::kAttnBias), n, 3 * c, stream));
      for (auto [out, column] : {std::pair<float*, int64_t>{bb.q.data(), 0},
                                 {bb.k.data(), c},
                                 {bb.v.data(), 2 * c}}) {
        RS_CUDA_RETURN_IF_ERROR(k::LaunchSplitHeads(
            out, qkv_.data() + column, 3 * c, batch, seq, heads, hs, stream));
      }
      // Scores q k^T per (example, head), then the causal softmax.
      RS_ASSIGN_OR_RETURN(const void* q_op,
                          Operand(0, bb.q.data(), n * c, stream));
      RS_ASSIGN_OR_RETURN(const void* k_op,
                          Operand(1, bb.k.data(), n * c, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), false, true, seq, seq, hs, q_op, seq * hs, k_op,
          seq * hs, bb.att.data(), seq * seq, bh, bf16()));
      RS_CUDA_RETURN_IF_ERROR(
          k::LaunchCausalSoftmaxForward(bb.att.data(), bh, seq, scale, stream));
      RS_ASSIGN_OR_RETURN(const void* att_op,
                          Operand(0, bb.att.data(), bh * seq * seq, stream));
      RS_ASSIGN_OR_RETURN(const void* v_op,
                          Operand(1, bb.v.data(), n * c, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), false, false, seq, hs, seq, att_op, seq * seq,
          v_op, seq * hs, yp_.data(), seq * hs, bh, bf16()));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchMergeHeads(
          bb.atty.data(), c, yp_.data(), batch, seq, heads, hs, stream));
      RS_RETURN_IF_ERROR(Linear(bb.atty.data(), W(T::kAttnProjWeight), n, c, c,
                                tmp_.data(), stream));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchResidualAddBias(
          bb.resid_mid.data(), bb.resid_in.data(), tmp_.data(),
          W(T::kAttnProjBias), n, c, stream));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchLayerNormForward(
          bb.ln2_out.data(), bb.ln2_mean.data(), bb.ln2_rstd.data(),
          bb.resid_mid.data(), W(T::kLn2Weight), W(T::kLn2Bias), n, c, stream));
      RS_RETURN_IF_ERROR(Linear(bb.ln2_out.data(), W(T::kFcWeight), n, c, 4 * c,
                                bb.fc_pre.data(), stream));
      RS_CUDA_RETURN_IF_ERROR(
          k::LaunchAddBias(bb.fc_pre.data(), W(T::kFcBias), n, 4 * c, stream));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchGeluForward(
          bb.fc_act.data(), bb.fc_pre.data(), n * 4 * c, stream));
      RS_RETURN_IF_ERROR(Linear(bb.fc_act.data(), W(T::kMlpProjWeight), n,
                                4 * c, c, tmp_.data(), stream));
      float* next =
          l + 1 < L ? blocks_[l + 1].resid_in.data() : resid_out_.data();
      RS_CUDA_RETURN_IF_ERROR(
          k::LaunchResidualAddBias(next, bb.resid_mid.data(), tmp_.data(),
                                   W(T::kMlpProjBias), n, c, stream));
    }
    RS_CUDA_RETURN_IF_ERROR(k::LaunchLayerNormForward(
        lnf_out_.data(), lnf_mean_.data(), lnf_rstd_.data(), resid_out_.data(),
        P(params, T::LnfWeight(L)), P(params, T::LnfBias(L)), n, c, stream));
    // Tied head: logits = ln_f(x) wte^T.
    const int64_t v = config_.vocab_size;
    RS_ASSIGN_OR_RETURN(const void* x_op,
                        Operand(0, lnf_out_.data(), n * c, stream));
    RS_ASSIGN_OR_RETURN(const void* wte_op,
                        Operand(1, P(params, T::kWte), v * c, stream));
    return RowMajorGemm(handles_.cublas(), false, true, n, v, c, x_op, wte_op,
                        logits_.data(), bf16());
  }

  // logits_ holds d(loss)/d(logits).
  absl::Status Backward(int64_t batch, const float* params, float* grads,
                        const GradientReadyFn& on_ready, cudaStream_t stream) {
    const int64_t seq = config_.block_size;
    const int64_t n = batch * seq;
    const int64_t c = config_.n_embd;
    const int64_t v = config_.vocab_size;
    const int64_t heads = config_.n_head;
    const int64_t hs = c / heads;
    const int64_t bh = batch * heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    const int L = static_cast<int>(config_.n_layer);
    auto ready = [&](int tensor) -> absl::Status {
      RS_CUDA_RETURN_IF_ERROR(cudaEventRecord(handles_.ready(tensor), stream));
      if (on_ready) on_ready(tensor);
      return absl::OkStatus();
    };

    // Head: dwte = dlogits^T ln_f(x) (the embedding adds to it at the end),
    // d(ln_f out) = dlogits wte.
    RS_ASSIGN_OR_RETURN(const void* dlogits_op,
                        Operand(0, logits_.data(), n * v, stream));
    RS_ASSIGN_OR_RETURN(const void* lnf_op,
                        Operand(1, lnf_out_.data(), n * c, stream));
    RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), true, false, v, c, n,
                                    dlogits_op, lnf_op, G(grads, T::kWte),
                                    bf16()));
    RS_ASSIGN_OR_RETURN(const void* wte_op,
                        Operand(1, P(params, T::kWte), v * c, stream));
    RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), false, false, n, c, v,
                                    dlogits_op, wte_op, dln_.data(), bf16()));
    RS_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(dresid_.data(), 0, n * c * sizeof(float), stream));
    RS_RETURN_IF_ERROR(LayerNormBackward(
        dln_.data(), resid_out_.data(), lnf_mean_.data(), lnf_rstd_.data(),
        P(params, T::LnfWeight(L)), G(grads, T::LnfWeight(L)),
        G(grads, T::LnfBias(L)), n, c, stream));
    RS_RETURN_IF_ERROR(ready(T::LnfWeight(L)));
    RS_RETURN_IF_ERROR(ready(T::LnfBias(L)));

    for (int l = L - 1; l >= 0; --l) {
      BlockBuffers& bb = blocks_[l];
      auto W = [&](T::Block which) {
        return P(params, T::BlockTensor(l, which));
      };
      auto D = [&](T::Block which) {
        return G(grads, T::BlockTensor(l, which));
      };
      auto ready_pair = [&](T::Block weight, T::Block bias) -> absl::Status {
        RS_RETURN_IF_ERROR(ready(T::BlockTensor(l, weight)));
        return ready(T::BlockTensor(l, bias));
      };
      // x += mlp.c_proj(gelu(c_fc(ln_2(x)))).
      RS_RETURN_IF_ERROR(LinearBackward(
          bb.fc_act.data(), dresid_.data(), W(T::kMlpProjWeight), n, 4 * c, c,
          D(T::kMlpProjWeight), D(T::kMlpProjBias), dfc_.data(), stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kMlpProjWeight, T::kMlpProjBias));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchGeluBackward(
          dfc_.data(), bb.fc_pre.data(), n * 4 * c, stream));
      RS_RETURN_IF_ERROR(LinearBackward(
          bb.ln2_out.data(), dfc_.data(), W(T::kFcWeight), n, c, 4 * c,
          D(T::kFcWeight), D(T::kFcBias), dln_.data(), stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kFcWeight, T::kFcBias));
      RS_RETURN_IF_ERROR(LayerNormBackward(
          dln_.data(), bb.resid_mid.data(), bb.ln2_mean.data(),
          bb.ln2_rstd.data(), W(T::kLn2Weight), D(T::kLn2Weight),
          D(T::kLn2Bias), n, c, stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kLn2Weight, T::kLn2Bias));
      // x += attn.c_proj(attention(c_attn(ln_1(x)))).
      RS_RETURN_IF_ERROR(LinearBackward(
          bb.atty.data(), dresid_.data(), W(T::kAttnProjWeight), n, c, c,
          D(T::kAttnProjWeight), D(T::kAttnProjBias), tmp_.data(), stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kAttnProjWeight, T::kAttnProjBias));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchSplitHeads(
          dyp_.data(), tmp_.data(), c, batch, seq, heads, hs, stream));
      // dP = dY v^T, dv = P^T dY, dS = softmax backward, dq = dS k,
      // dk = dS^T q.
      RS_ASSIGN_OR_RETURN(const void* dy_op,
                          Operand(0, dyp_.data(), n * c, stream));
      RS_ASSIGN_OR_RETURN(const void* v_op,
                          Operand(1, bb.v.data(), n * c, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), false, true, seq, seq, hs, dy_op, seq * hs, v_op,
          seq * hs, dp_.data(), seq * seq, bh, bf16()));
      RS_ASSIGN_OR_RETURN(const void* att_op,
                          Operand(1, bb.att.data(), bh * seq * seq, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), true, false, seq, hs, seq, att_op, seq * seq,
          dy_op, seq * hs, dvp_.data(), seq * hs, bh, bf16()));
      RS_CUDA_RETURN_IF_ERROR(k::LaunchCausalSoftmaxBackward(
          dp_.data(), bb.att.data(), bh, seq, scale, stream));
      RS_ASSIGN_OR_RETURN(const void* dp_op,
                          Operand(0, dp_.data(), bh * seq * seq, stream));
      RS_ASSIGN_OR_RETURN(const void* k_op,
                          Operand(1, bb.k.data(), n * c, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), false, false, seq, hs, seq, dp_op, seq * seq, k_op,
          seq * hs, dqp_.data(), seq * hs, bh, bf16()));
      RS_ASSIGN_OR_RETURN(const void* q_op,
                          Operand(1, bb.q.data(), n * c, stream));
      RS_RETURN_IF_ERROR(RowMajorBatchedGemm(
          handles_.cublas(), true, false, seq, hs, seq, dp_op, seq * seq, q_op,
          seq * hs, dkp_.data(), seq * hs, bh, bf16()));
      for (auto [in, column] :
           {std::pair<const float*, int64_t>{dqp_.data(), 0},
            {dkp_.data(), c},
            {dvp_.data(), 2 * c}}) {
        RS_CUDA_RETURN_IF_ERROR(k::LaunchMergeHeads(
            dqkv_.data() + column, 3 * c, in, batch, seq, heads, hs, stream));
      }
      RS_RETURN_IF_ERROR(LinearBackward(
          bb.ln1_out.data(), dqkv_.data(), W(T::kAttnWeight), n, c, 3 * c,
          D(T::kAttnWeight), D(T::kAttnBias), dln_.data(), stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kAttnWeight, T::kAttnBias));
      RS_RETURN_IF_ERROR(
          LayerNormBackward(dln_.data(), bb.resid_in.data(), bb.ln1_mean.data(),
                            bb.ln1_rstd.data(), W(T::kLn1Weight),
                            D(T::kLn1Weight), D(T::kLn1Bias), n, c, stream));
      RS_RETURN_IF_ERROR(ready_pair(T::kLn1Weight, T::kLn1Bias));
    }

    // Embeddings: x = wte[token] + wpe[position].
    RS_CUDA_RETURN_IF_ERROR(k::LaunchWpeBackward(
        G(grads, T::kWpe), dresid_.data(), batch, seq, c, stream));
    RS_RETURN_IF_ERROR(ready(T::kWpe));
    RS_CUDA_RETURN_IF_ERROR(
        k::LaunchWteBackward(G(grads, T::kWte), dresid_.data(), tokens(),
                             seq + 1, batch, seq, v, c, stream));
    return ready(T::kWte);
  }

  bool bf16() const { return precision_ == Precision::kBf16; }

  // A product's operand x[0, count): itself in float32; in bf16, its
  // bfloat16 copy in slot `slot` (0 or 1), rounded at each use (a sharded
  // run may have replaced the parameters since the last).
  absl::StatusOr<const void*> Operand(int slot, const float* x, int64_t count,
                                      cudaStream_t stream) {
    if (!bf16()) return static_cast<const void*>(x);
    return bf16_slots_.Round(slot, x, count, stream);
  }

  // y (rows x out) = x (rows x in) W (in x out), without the bias.
  absl::Status Linear(const float* x, const float* w, int64_t rows, int64_t in,
                      int64_t out, float* y, cudaStream_t stream) {
    RS_ASSIGN_OR_RETURN(const void* x_op, Operand(0, x, rows * in, stream));
    RS_ASSIGN_OR_RETURN(const void* w_op, Operand(1, w, in * out, stream));
    return RowMajorGemm(handles_.cublas(), false, false, rows, out, in, x_op,
                        w_op, y, bf16());
  }

  // For y = x W + b (x: rows x in, W: in x out): dW = x^T dy, db = column
  // sums of dy, dx = dy W^T (the last read of W).
  absl::Status LinearBackward(const float* x, const float* dy, const float* w,
                              int64_t rows, int64_t in, int64_t out, float* dw,
                              float* db, float* dx, cudaStream_t stream) {
    RS_ASSIGN_OR_RETURN(const void* x_op, Operand(0, x, rows * in, stream));
    RS_ASSIGN_OR_RETURN(const void* dy_op, Operand(1, dy, rows * out, stream));
    RS_RETURN_IF_ERROR(RowMajorGemm(handles_.cublas(), true, false, in, out,
                                    rows, x_op, dy_op, dw, bf16()));
    RS_RETURN_IF_ERROR(handles_.ColumnSums(dy, rows, out, db));
    // Slot 0 again: the product that read x's copy is enqueued before it.
    RS_ASSIGN_OR_RETURN(const void* w_op, Operand(0, w, in * out, stream));
    return RowMajorGemm(handles_.cublas(), false, true, rows, in, out, dy_op,
                        w_op, dx, bf16());
  }

  // dresid_ += d(input) of a LayerNorm; its dw, db.
  absl::Status LayerNormBackward(const float* dout, const float* x,
                                 const float* mean, const float* rstd,
                                 const float* w, float* dw, float* db,
                                 int64_t rows, int64_t c, cudaStream_t stream) {
    RS_CUDA_RETURN_IF_ERROR(k::LaunchLayerNormParamGrads(
        dw, db, dout, x, mean, rstd, rows, c, ln_scratch_.data(), stream));
    RS_CUDA_RETURN_IF_ERROR(k::LaunchLayerNormBackward(
        dresid_.data(), dout, x, mean, rstd, w, rows, c, stream));
    return absl::OkStatus();
  }

  // Sum of the first n row losses, in double on the host (waits for the
  // stream).
  absl::StatusOr<double> SumLoss(int64_t n, cudaStream_t stream) {
    RS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_row_loss_.data(),
                                            row_loss_.data(), n * sizeof(float),
                                            cudaMemcpyDeviceToHost, stream));
    RS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    double total = 0.0;
    for (int64_t r = 0; r < n; ++r) total += host_row_loss_[r];
    return total;
  }

  const CharLmConfig config_;
  const TensorLayout layout_;
  const int device_;
  const Precision precision_;
  ModelHandles handles_;
  double compute_seconds_ = 0.0;

  // Scratch for up to capacity_ examples per forward.
  int64_t capacity_ = 0;
  std::vector<BlockBuffers> blocks_;
  DeviceBuffer tokens_;      // int32 ids, rows of block_size + 1
  DeviceBuffer ln_scratch_;  // LayerNorm parameter gradients' chunk sums
  DeviceBuffer resid_out_, lnf_out_, lnf_mean_, lnf_rstd_;
  DeviceBuffer logits_;          // n x vocab; d(loss)/d(logits) after the loss
  DeviceBuffer row_loss_;        // n
  DeviceBuffer qkv_, tmp_, yp_;  // forward scratch
  DeviceBuffer dresid_, dln_, dfc_, dyp_, dqp_, dkp_, dvp_, dp_, dqkv_;
  std::vector<float> host_row_loss_;
  Bf16Slots bf16_slots_;  // kBf16 only: the products' operands
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaCharLm>> CudaCharLm::Create(
    const CharLmConfig& config, int device, Precision precision) {
  RS_ASSIGN_OR_RETURN(TensorLayout layout, CharLmLayout(config));
  if (device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda charlm device must be >= 0, got ", device));
  }
  auto model = std::make_unique<CudaCharLmImpl>(config, std::move(layout),
                                                device, precision);
  RS_RETURN_IF_ERROR(model->Init());
  return std::unique_ptr<CudaCharLm>(std::move(model));
}

}  // namespace ringside
