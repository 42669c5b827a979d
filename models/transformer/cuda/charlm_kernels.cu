// Kernels of models/transformer/cuda/charlm_kernels.h. Element-wise kernels
// use grid-stride loops over 64-bit indices; row reductions (LayerNorm,
// softmax, cross-entropy) use one warp per row; column reductions (bias and
// LayerNorm parameter gradients) a 32 x 8 tile per 32 columns.
#include <algorithm>
#include <cmath>

#include "models/transformer/cuda/charlm_kernels.h"

namespace ringside {
namespace charlm_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = kThreads / kWarp;
constexpr float kLayerNormEps = 1e-5f;
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715f;

int Blocks(int64_t n) {
  return static_cast<int>(
      std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

// Blocks of kWarpsPerBlock warps for one warp per row (grid-stride over
// rows inside the kernels).
int RowBlocks(int64_t rows) {
  return static_cast<int>(std::min<int64_t>(
      (rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks));
}

__device__ int64_t GlobalIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t GridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}
__device__ int64_t WarpIndex() {
  return static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock +
         threadIdx.x / kWarp;
}
__device__ int64_t WarpStride() {
  return static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
}
__device__ int Lane() { return threadIdx.x % kWarp; }

__device__ float WarpSum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}
__device__ float WarpMax(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

__global__ void EmbeddingForwardKernel(float* out, const int32_t* tokens,
                                       int64_t token_stride, const float* wte,
                                       const float* wpe, int64_t seq, int64_t c,
                                       int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const int64_t row = i / c;
    const int64_t j = i % c;
    const int64_t b = row / seq;
    const int64_t t = row % seq;
    const int64_t token = tokens[b * token_stride + t];
    out[i] = wte[token * c + j] + wpe[t * c + j];
  }
}

__global__ void WpeBackwardKernel(float* dwpe, const float* dx, int64_t batch,
                                  int64_t seq, int64_t c) {
  const int64_t n = seq * c;
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    float sum = 0.0f;
    for (int64_t b = 0; b < batch; ++b) sum += dx[b * n + i];
    dwpe[i] = sum;
  }
}

__global__ void WteBackwardKernel(float* dwte, const float* dx,
                                  const int32_t* tokens, int64_t token_stride,
                                  int64_t batch, int64_t seq, int64_t vocab,
                                  int64_t c) {
  const int64_t n = vocab * c;
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const int64_t v = i / c;
    const int64_t j = i % c;
    float sum = 0.0f;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < seq; ++t) {
        if (tokens[b * token_stride + t] == v) {
          sum += dx[(b * seq + t) * c + j];
        }
      }
    }
    dwte[i] += sum;
  }
}

__global__ void LayerNormForwardKernel(float* out, float* mean, float* rstd,
                                       const float* x, const float* w,
                                       const float* b, int64_t rows,
                                       int64_t c) {
  for (int64_t r = WarpIndex(); r < rows; r += WarpStride()) {
    const float* xr = x + r * c;
    float sum = 0.0f;
    for (int64_t j = Lane(); j < c; j += kWarp) sum += xr[j];
    const float m = WarpSum(sum) / static_cast<float>(c);
    float var = 0.0f;
    for (int64_t j = Lane(); j < c; j += kWarp) {
      const float d = xr[j] - m;
      var += d * d;
    }
    var = WarpSum(var) / static_cast<float>(c);
    const float rs = rsqrtf(var + kLayerNormEps);
    float* outr = out + r * c;
    for (int64_t j = Lane(); j < c; j += kWarp) {
      outr[j] = (xr[j] - m) * rs * w[j] + b[j];
    }
    if (Lane() == 0) {
      mean[r] = m;
      rstd[r] = rs;
    }
  }
}

__global__ void LayerNormBackwardKernel(float* dx, const float* dout,
                                        const float* x, const float* mean,
                                        const float* rstd, const float* w,
                                        int64_t rows, int64_t c) {
  for (int64_t r = WarpIndex(); r < rows; r += WarpStride()) {
    const float* dr = dout + r * c;
    const float* xr = x + r * c;
    const float m = mean[r];
    const float rs = rstd[r];
    float sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f;
    for (int64_t j = Lane(); j < c; j += kWarp) {
      const float dxhat = dr[j] * w[j];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * (xr[j] - m) * rs;
    }
    const float mean_dxhat = WarpSum(sum_dxhat) / static_cast<float>(c);
    const float mean_dxhat_xhat =
        WarpSum(sum_dxhat_xhat) / static_cast<float>(c);
    float* dxr = dx + r * c;
    for (int64_t j = Lane(); j < c; j += kWarp) {
      const float xhat = (xr[j] - m) * rs;
      dxr[j] += rs * (dr[j] * w[j] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

constexpr int kColumnTile = 32;
constexpr int kRowLanes = 8;

// Stage 1: block (x, y) = (32 columns, rows [y * kLnChunkRows, ...)):
// lane ty adds the chunk's rows ty, ty + 8, ...; the block writes its
// chunk's sums to partial_w / partial_b[chunk][j]. Enough blocks to fill
// the GPU where one block per 32 columns left most of it idle.
__global__ void LayerNormParamPartialsKernel(float* partial_w, float* partial_b,
                                             const float* dout, const float* x,
                                             const float* mean,
                                             const float* rstd, int64_t rows,
                                             int64_t c) {
  __shared__ float tile_w[kRowLanes][kColumnTile + 1];
  __shared__ float tile_b[kRowLanes][kColumnTile + 1];
  const int64_t j =
      static_cast<int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kLnChunkRows;
  const int64_t last =
      rows < first + kLnChunkRows ? rows : first + kLnChunkRows;
  float sw = 0.0f, sb = 0.0f;
  if (j < c) {
    for (int64_t r = first + threadIdx.y; r < last; r += kRowLanes) {
      const float d = dout[r * c + j];
      sw += d * (x[r * c + j] - mean[r]) * rstd[r];
      sb += d;
    }
  }
  tile_w[threadIdx.y][threadIdx.x] = sw;
  tile_b[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0 && j < c) {
    float tw = 0.0f, tb = 0.0f;
    for (int y = 0; y < kRowLanes; ++y) {
      tw += tile_w[y][threadIdx.x];
      tb += tile_b[y][threadIdx.x];
    }
    partial_w[blockIdx.y * c + j] = tw;
    partial_b[blockIdx.y * c + j] = tb;
  }
}

// Stage 2: dw[j], db[j] = the chunks' sums added in chunk order.
__global__ void LayerNormParamTotalsKernel(float* dw, float* db,
                                           const float* partial_w,
                                           const float* partial_b,
                                           int64_t chunks, int64_t c) {
  for (int64_t j = GlobalIndex(); j < c; j += GridStride()) {
    float tw = 0.0f, tb = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) {
      tw += partial_w[k * c + j];
      tb += partial_b[k * c + j];
    }
    dw[j] = tw;
    db[j] = tb;
  }
}

__global__ void GeluForwardKernel(float* y, const float* x, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(kGeluScale * (v + kGeluCubic * v * v * v)));
  }
}

__global__ void GeluBackwardKernel(float* dy, const float* x, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float v = x[i];
    const float th = tanhf(kGeluScale * (v + kGeluCubic * v * v * v));
    const float grad =
        0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * kGeluScale *
                                 (1.0f + 3.0f * kGeluCubic * v * v);
    dy[i] *= grad;
  }
}

__global__ void AddBiasKernel(float* y, const float* bias, int64_t cols,
                              int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    y[i] += bias[i % cols];
  }
}

__global__ void ResidualAddBiasKernel(float* out, const float* resid,
                                      const float* y, const float* bias,
                                      int64_t cols, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    out[i] = resid[i] + y[i] + bias[i % cols];
  }
}

__global__ void SplitHeadsKernel(float* out, const float* in, int64_t in_stride,
                                 int64_t seq, int64_t heads, int64_t hs,
                                 int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    // i indexes out as (b, h, t, d).
    const int64_t d = i % hs;
    const int64_t t = (i / hs) % seq;
    const int64_t h = (i / (hs * seq)) % heads;
    const int64_t b = i / (hs * seq * heads);
    out[i] = in[(b * seq + t) * in_stride + h * hs + d];
  }
}

__global__ void MergeHeadsKernel(float* out, int64_t out_stride,
                                 const float* in, int64_t seq, int64_t heads,
                                 int64_t hs, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const int64_t d = i % hs;
    const int64_t t = (i / hs) % seq;
    const int64_t h = (i / (hs * seq)) % heads;
    const int64_t b = i / (hs * seq * heads);
    out[(b * seq + t) * out_stride + h * hs + d] = in[i];
  }
}

// One warp per row of all the seq x seq matrices (matrices * seq rows).
__global__ void CausalSoftmaxForwardKernel(float* att, int64_t rows,
                                           int64_t seq, float scale) {
  for (int64_t r = WarpIndex(); r < rows; r += WarpStride()) {
    const int64_t i = r % seq;  // the row's position: sees j <= i
    float* row = att + r * seq;
    float max = -INFINITY;
    for (int64_t j = Lane(); j <= i; j += kWarp)
      max = fmaxf(max, row[j] * scale);
    max = WarpMax(max);
    float sum = 0.0f;
    for (int64_t j = Lane(); j <= i; j += kWarp) {
      const float e = expf(row[j] * scale - max);
      row[j] = e;
      sum += e;
    }
    const float inv = 1.0f / WarpSum(sum);
    for (int64_t j = Lane(); j < seq; j += kWarp) {
      row[j] = j <= i ? row[j] * inv : 0.0f;
    }
  }
}

__global__ void CausalSoftmaxBackwardKernel(float* datt, const float* att,
                                            int64_t rows, int64_t seq,
                                            float scale) {
  for (int64_t r = WarpIndex(); r < rows; r += WarpStride()) {
    const int64_t i = r % seq;
    float* drow = datt + r * seq;
    const float* prow = att + r * seq;
    float dot = 0.0f;
    for (int64_t j = Lane(); j <= i; j += kWarp) dot += prow[j] * drow[j];
    dot = WarpSum(dot);
    for (int64_t j = Lane(); j < seq; j += kWarp) {
      drow[j] = j <= i ? scale * prow[j] * (drow[j] - dot) : 0.0f;
    }
  }
}

__global__ void CrossEntropyKernel(float* logits, float* row_loss,
                                   const int32_t* tokens, int64_t token_stride,
                                   int64_t seq, int64_t vocab, int64_t rows,
                                   float grad_scale, bool want_gradient) {
  for (int64_t r = WarpIndex(); r < rows; r += WarpStride()) {
    float* z = logits + r * vocab;
    const int64_t target = tokens[(r / seq) * token_stride + r % seq + 1];
    float max = -INFINITY;
    for (int64_t j = Lane(); j < vocab; j += kWarp) max = fmaxf(max, z[j]);
    max = WarpMax(max);
    float sum = 0.0f;
    for (int64_t j = Lane(); j < vocab; j += kWarp) sum += expf(z[j] - max);
    const float lse = max + logf(WarpSum(sum));
    // Every lane reads the target's logit before any lane overwrites it.
    const float target_logit = z[target];
    __syncwarp();
    if (Lane() == 0) row_loss[r] = lse - target_logit;
    if (!want_gradient) continue;
    for (int64_t j = Lane(); j < vocab; j += kWarp) {
      float g = expf(z[j] - lse) * grad_scale;
      if (j == target) g -= grad_scale;
      z[j] = g;
    }
  }
}

}  // namespace

cudaError_t LaunchEmbeddingForward(float* out, const int32_t* tokens,
                                   int64_t token_stride, const float* wte,
                                   const float* wpe, int64_t batch, int64_t seq,
                                   int64_t c, cudaStream_t stream) {
  const int64_t n = batch * seq * c;
  if (n <= 0) return cudaSuccess;
  EmbeddingForwardKernel<<<Blocks(n), kThreads, 0, stream>>>(
      out, tokens, token_stride, wte, wpe, seq, c, n);
  return cudaGetLastError();
}

cudaError_t LaunchWpeBackward(float* dwpe, const float* dx, int64_t batch,
                              int64_t seq, int64_t c, cudaStream_t stream) {
  if (seq * c <= 0 || batch <= 0) return cudaSuccess;
  WpeBackwardKernel<<<Blocks(seq * c), kThreads, 0, stream>>>(dwpe, dx, batch,
                                                              seq, c);
  return cudaGetLastError();
}

cudaError_t LaunchWteBackward(float* dwte, const float* dx,
                              const int32_t* tokens, int64_t token_stride,
                              int64_t batch, int64_t seq, int64_t vocab,
                              int64_t c, cudaStream_t stream) {
  if (vocab * c <= 0 || batch * seq <= 0) return cudaSuccess;
  WteBackwardKernel<<<Blocks(vocab * c), kThreads, 0, stream>>>(
      dwte, dx, tokens, token_stride, batch, seq, vocab, c);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormForward(float* out, float* mean, float* rstd,
                                   const float* x, const float* w,
                                   const float* b, int64_t rows, int64_t c,
                                   cudaStream_t stream) {
  if (rows <= 0 || c <= 0) return cudaSuccess;
  LayerNormForwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(
      out, mean, rstd, x, w, b, rows, c);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormBackward(float* dx, const float* dout,
                                    const float* x, const float* mean,
                                    const float* rstd, const float* w,
                                    int64_t rows, int64_t c,
                                    cudaStream_t stream) {
  if (rows <= 0 || c <= 0) return cudaSuccess;
  LayerNormBackwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(
      dx, dout, x, mean, rstd, w, rows, c);
  return cudaGetLastError();
}

int64_t LayerNormParamScratchFloats(int64_t rows, int64_t c) {
  return 2 * ((rows + kLnChunkRows - 1) / kLnChunkRows) * c;
}

cudaError_t LaunchLayerNormParamGrads(float* dw, float* db, const float* dout,
                                      const float* x, const float* mean,
                                      const float* rstd, int64_t rows,
                                      int64_t c, float* scratch,
                                      cudaStream_t stream) {
  if (c <= 0) return cudaSuccess;
  if (rows <= 0) {
    cudaError_t e = cudaMemsetAsync(dw, 0, c * sizeof(float), stream);
    return e != cudaSuccess ? e
                            : cudaMemsetAsync(db, 0, c * sizeof(float), stream);
  }
  const int64_t tiles = (c + kColumnTile - 1) / kColumnTile;
  const int64_t chunks = (rows + kLnChunkRows - 1) / kLnChunkRows;
  if (tiles > 0x7fffffff || chunks > 65535) return cudaErrorInvalidValue;
  float* partial_w = scratch;
  float* partial_b = scratch + chunks * c;
  LayerNormParamPartialsKernel<<<dim3(static_cast<unsigned>(tiles),
                                      static_cast<unsigned>(chunks)),
                                 dim3(kColumnTile, kRowLanes), 0, stream>>>(
      partial_w, partial_b, dout, x, mean, rstd, rows, c);
  LayerNormParamTotalsKernel<<<Blocks(c), kThreads, 0, stream>>>(
      dw, db, partial_w, partial_b, chunks, c);
  return cudaGetLastError();
}

cudaError_t LaunchGeluForward(float* y, const float* x, int64_t n,
                              cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  GeluForwardKernel<<<Blocks(n), kThreads, 0, stream>>>(y, x, n);
  return cudaGetLastError();
}

cudaError_t LaunchGeluBackward(float* dy, const float* x, int64_t n,
                               cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  GeluBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, x, n);
  return cudaGetLastError();
}

cudaError_t LaunchAddBias(float* y, const float* bias, int64_t rows,
                          int64_t cols, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n <= 0) return cudaSuccess;
  AddBiasKernel<<<Blocks(n), kThreads, 0, stream>>>(y, bias, cols, n);
  return cudaGetLastError();
}

cudaError_t LaunchResidualAddBias(float* out, const float* resid,
                                  const float* y, const float* bias,
                                  int64_t rows, int64_t cols,
                                  cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n <= 0) return cudaSuccess;
  ResidualAddBiasKernel<<<Blocks(n), kThreads, 0, stream>>>(out, resid, y, bias,
                                                            cols, n);
  return cudaGetLastError();
}

cudaError_t LaunchSplitHeads(float* out, const float* in, int64_t in_stride,
                             int64_t batch, int64_t seq, int64_t heads,
                             int64_t hs, cudaStream_t stream) {
  const int64_t n = batch * seq * heads * hs;
  if (n <= 0) return cudaSuccess;
  SplitHeadsKernel<<<Blocks(n), kThreads, 0, stream>>>(out, in, in_stride, seq,
                                                       heads, hs, n);
  return cudaGetLastError();
}

cudaError_t LaunchMergeHeads(float* out, int64_t out_stride, const float* in,
                             int64_t batch, int64_t seq, int64_t heads,
                             int64_t hs, cudaStream_t stream) {
  const int64_t n = batch * seq * heads * hs;
  if (n <= 0) return cudaSuccess;
  MergeHeadsKernel<<<Blocks(n), kThreads, 0, stream>>>(out, out_stride, in, seq,
                                                       heads, hs, n);
  return cudaGetLastError();
}

cudaError_t LaunchCausalSoftmaxForward(float* att, int64_t matrices,
                                       int64_t seq, float scale,
                                       cudaStream_t stream) {
  const int64_t rows = matrices * seq;
  if (rows <= 0) return cudaSuccess;
  CausalSoftmaxForwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(
      att, rows, seq, scale);
  return cudaGetLastError();
}

cudaError_t LaunchCausalSoftmaxBackward(float* datt, const float* att,
                                        int64_t matrices, int64_t seq,
                                        float scale, cudaStream_t stream) {
  const int64_t rows = matrices * seq;
  if (rows <= 0) return cudaSuccess;
  CausalSoftmaxBackwardKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(
      datt, att, rows, seq, scale);
  return cudaGetLastError();
}

cudaError_t LaunchCrossEntropy(float* logits, float* row_loss,
                               const int32_t* tokens, int64_t token_stride,
                               int64_t batch, int64_t seq, int64_t vocab,
                               float grad_scale, bool want_gradient,
                               cudaStream_t stream) {
  const int64_t rows = batch * seq;
  if (rows <= 0 || vocab <= 0) return cudaSuccess;
  CrossEntropyKernel<<<RowBlocks(rows), kThreads, 0, stream>>>(
      logits, row_loss, tokens, token_stride, seq, vocab, rows, grad_scale,
      want_gradient);
  return cudaGetLastError();
}

}  // namespace charlm_kernels
}  // namespace ringside
