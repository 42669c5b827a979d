// The kernels of the CUDA character transformer (cuda_charlm.h); the
// matrix products are cuBLAS's. Each Launch* enqueues its kernel(s) on
// `stream` and returns the launch's own error (cudaGetLastError); a fault
// inside a kernel shows up at the next synchronization. Nothing is launched
// for empty inputs. Matrices are row-major float32; n = batch x seq rows of
// the residual stream; token rows are `token_stride` ids apart (seq + 1 for
// training batches). Every reduction has a fixed order (no atomics), so
// results are deterministic.
//
// The arithmetic follows models/transformer/charlm_core.cc: LayerNorm with
// epsilon 1e-5, GPT-2's tanh GELU, causal softmax of scaled scores.
//
// Only compiled with --config=cuda (nvcc; tools/cuda.bzl), hence no absl:
// cuda_charlm.cc wraps the results. Thread-safe.
#ifndef RINGSIDE_MODELS_TRANSFORMER_CUDA_CHARLM_KERNELS_H_
#define RINGSIDE_MODELS_TRANSFORMER_CUDA_CHARLM_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ringside {
namespace charlm_kernels {

// out[b*seq + t][:] = wte[tokens[b*token_stride + t]][:] + wpe[t][:].
cudaError_t LaunchEmbeddingForward(float* out, const int32_t* tokens,
                                   int64_t token_stride, const float* wte,
                                   const float* wpe, int64_t batch, int64_t seq,
                                   int64_t c, cudaStream_t stream);

// dwpe[t][:] = sum over b of dx[b*seq + t][:] (seq rows written).
cudaError_t LaunchWpeBackward(float* dwpe, const float* dx, int64_t batch,
                              int64_t seq, int64_t c, cudaStream_t stream);

// dwte[v][:] += sum of dx[row][:] over the rows whose input token is v
// (scatter-add as a deterministic gather: one thread per (v, column)).
cudaError_t LaunchWteBackward(float* dwte, const float* dx,
                              const int32_t* tokens, int64_t token_stride,
                              int64_t batch, int64_t seq, int64_t vocab,
                              int64_t c, cudaStream_t stream);

// out = (x - mean) * rstd * w + b per row of c; mean and rstd (rows) kept
// for backward.
cudaError_t LaunchLayerNormForward(float* out, float* mean, float* rstd,
                                   const float* x, const float* w,
                                   const float* b, int64_t rows, int64_t c,
                                   cudaStream_t stream);

// dx += d(input) of LayerNorm for d(out) = dout (x, mean, rstd from the
// forward).
cudaError_t LaunchLayerNormBackward(float* dx, const float* dout,
                                    const float* x, const float* mean,
                                    const float* rstd, const float* w,
                                    int64_t rows, int64_t c,
                                    cudaStream_t stream);

// dw[j] = sum over rows of dout * xhat, db[j] = sum over rows of dout
// (overwritten), in two kernels: sums over chunks of kLnChunkRows rows
// into `scratch` (LayerNormParamScratchFloats(rows, c) floats), then the
// chunks' sums in chunk order.
constexpr int64_t kLnChunkRows = 128;
int64_t LayerNormParamScratchFloats(int64_t rows, int64_t c);
cudaError_t LaunchLayerNormParamGrads(float* dw, float* db, const float* dout,
                                      const float* x, const float* mean,
                                      const float* rstd, int64_t rows,
                                      int64_t c, float* scratch,
                                      cudaStream_t stream);

// y = gelu(x) elementwise.
cudaError_t LaunchGeluForward(float* y, const float* x, int64_t n,
                              cudaStream_t stream);
// dy *= gelu'(x) elementwise.
cudaError_t LaunchGeluBackward(float* dy, const float* x, int64_t n,
                               cudaStream_t stream);

// y[r][j] += bias[j].
cudaError_t LaunchAddBias(float* y, const float* bias, int64_t rows,
                          int64_t cols, cudaStream_t stream);
// out[r][j] = resid[r][j] + y[r][j] + bias[j] (out may alias resid).
cudaError_t LaunchResidualAddBias(float* out, const float* resid,
                                  const float* y, const float* bias,
                                  int64_t rows, int64_t cols,
                                  cudaStream_t stream);

// out (batch, heads, seq, hs) from the column block starting at `in` of a
// (batch*seq) x in_stride matrix: out[b][h][t][d] =
// in[(b*seq + t)*in_stride + h*hs + d].
cudaError_t LaunchSplitHeads(float* out, const float* in, int64_t in_stride,
                             int64_t batch, int64_t seq, int64_t heads,
                             int64_t hs, cudaStream_t stream);
// The inverse: out[(b*seq + t)*out_stride + h*hs + d] = in[b][h][t][d].
cudaError_t LaunchMergeHeads(float* out, int64_t out_stride, const float* in,
                             int64_t batch, int64_t seq, int64_t heads,
                             int64_t hs, cudaStream_t stream);

// In place on `att`, `matrices` seq x seq score matrices: row i becomes
// softmax over j <= i of scale * att[i][j], and 0 for j > i.
cudaError_t LaunchCausalSoftmaxForward(float* att, int64_t matrices,
                                       int64_t seq, float scale,
                                       cudaStream_t stream);
// In place on `datt` (d(probabilities) in, d(raw scores) out):
// datt[i][j] = scale * p[i][j] * (datt[i][j] - sum_k p[i][k] datt[i][k])
// for j <= i, 0 above the diagonal.
cudaError_t LaunchCausalSoftmaxBackward(float* datt, const float* att,
                                        int64_t matrices, int64_t seq,
                                        float scale, cudaStream_t stream);

// Cross-entropy of the batch*seq rows of `logits` (vocab wide) against the
// next tokens (target of row b*seq + t is tokens[b*token_stride + t + 1]):
// row_loss[r] = lse(logits[r]) - logits[r][target]. With `want_gradient`,
// logits becomes grad_scale * (softmax - onehot(target)).
cudaError_t LaunchCrossEntropy(float* logits, float* row_loss,
                               const int32_t* tokens, int64_t token_stride,
                               int64_t batch, int64_t seq, int64_t vocab,
                               float grad_scale, bool want_gradient,
                               cudaStream_t stream);

}  // namespace charlm_kernels
}  // namespace ringside

#endif  // RINGSIDE_MODELS_TRANSFORMER_CUDA_CHARLM_KERNELS_H_
