// Kernels of models/cuda/mlp_kernels.h. Element-wise kernels use
// grid-stride loops over 64-bit indices; the softmax reduces one row per
// block (column sums are cuBLAS's: ModelHandles::ColumnSums).
#include <algorithm>

#include "models/cuda/mlp_kernels.h"

namespace ringside {
namespace kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

int Blocks(int64_t n) {
  return static_cast<int>(
      std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

__device__ int64_t GlobalIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t GridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

__global__ void AddBiasKernel(float* z, const float* bias, int64_t rows,
                              int64_t cols, bool relu) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float x = z[i] + bias[i % cols];
    z[i] = relu ? fmaxf(x, 0.0f) : x;
  }
}

__global__ void ReluBackwardKernel(float* dy, const float* y, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    if (!(y[i] > 0.0f)) dy[i] = 0.0f;
  }
}

// Block-wide reduction of `value` over kSoftmaxThreads threads; every
// thread gets the result. `scratch` holds kSoftmaxThreads floats.
constexpr int kSoftmaxThreads = 128;

template <typename Op>
__device__ float BlockReduce(float value, float* scratch, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kSoftmaxThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      scratch[threadIdx.x] =
          op(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// One block per row.
__global__ void SoftmaxCrossEntropyKernel(float* z, const int32_t* labels,
                                          int64_t cols, float grad_scale,
                                          bool want_gradient, float* row_loss) {
  __shared__ float scratch[kSoftmaxThreads];
  float* row = z + static_cast<int64_t>(blockIdx.x) * cols;
  float max = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kSoftmaxThreads) {
    max = fmaxf(max, row[c]);
  }
  max = BlockReduce(max, scratch, MaxOp());
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += kSoftmaxThreads) {
    sum += expf(row[c] - max);
  }
  sum = BlockReduce(sum, scratch, SumOp());
  const float lse = max + logf(sum);
  const int32_t label = labels[blockIdx.x];
  // Every thread has read what it needs of the row before anyone writes.
  if (threadIdx.x == 0) row_loss[blockIdx.x] = lse - row[label];
  if (!want_gradient) return;
  __syncthreads();
  for (int64_t c = threadIdx.x; c < cols; c += kSoftmaxThreads) {
    float g = expf(row[c] - lse) * grad_scale;
    if (c == label) g -= grad_scale;
    row[c] = g;
  }
}

// The optimizer kernels spell every operation with an _rn intrinsic so nvcc
// cannot contract a multiply and an add into one FMA (one rounding instead
// of two): each value then rounds as in optimizer.cc.
__global__ void SgdKernel(SgdStep s, float* p, const float* g, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float gi = __fadd_rn(g[i], __fmul_rn(s.weight_decay, p[i]));
    p[i] = __fsub_rn(p[i], __fmul_rn(s.lr, gi));
  }
}

__global__ void SgdMomentumKernel(SgdStep s, float* p, const float* g, float* v,
                                  int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float gi = __fadd_rn(g[i], __fmul_rn(s.weight_decay, p[i]));
    const float vi = __fadd_rn(__fmul_rn(s.momentum, v[i]), gi);
    v[i] = vi;
    p[i] = __fsub_rn(p[i], __fmul_rn(s.lr, vi));
  }
}

__global__ void AdamKernel(AdamStep s, float* p, const float* g, float* m,
                           float* v, int64_t n) {
  const float one_minus_b1 = __fsub_rn(1.0f, s.beta1);
  const float one_minus_b2 = __fsub_rn(1.0f, s.beta2);
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    const float gi = __fadd_rn(g[i], __fmul_rn(s.weight_decay, p[i]));
    const float mi =
        __fadd_rn(__fmul_rn(s.beta1, m[i]), __fmul_rn(one_minus_b1, gi));
    const float vi = __fadd_rn(__fmul_rn(s.beta2, v[i]),
                               __fmul_rn(__fmul_rn(one_minus_b2, gi), gi));
    m[i] = mi;
    v[i] = vi;
    const float mhat = __fdiv_rn(mi, s.bias_correction1);
    const float vhat = __fdiv_rn(vi, s.bias_correction2);
    p[i] = __fsub_rn(p[i], __fdiv_rn(__fmul_rn(s.lr, mhat),
                                     __fadd_rn(__fsqrt_rn(vhat), s.eps)));
  }
}

}  // namespace

cudaError_t LaunchAddBias(float* z, const float* bias, int64_t rows,
                          int64_t cols, bool relu, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  AddBiasKernel<<<Blocks(rows * cols), kThreads, 0, stream>>>(z, bias, rows,
                                                              cols, relu);
  return cudaGetLastError();
}

cudaError_t LaunchReluBackward(float* dy, const float* y, int64_t n,
                               cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  ReluBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxCrossEntropy(float* z, const int32_t* labels,
                                      int64_t rows, int64_t cols,
                                      float grad_scale, bool want_gradient,
                                      float* row_loss, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  SoftmaxCrossEntropyKernel<<<static_cast<unsigned>(rows), kSoftmaxThreads, 0,
                              stream>>>(z, labels, cols, grad_scale,
                                        want_gradient, row_loss);
  return cudaGetLastError();
}

cudaError_t LaunchSgdStep(const SgdStep& step, float* p, const float* g,
                          float* v, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (v == nullptr) {
    SgdKernel<<<Blocks(n), kThreads, 0, stream>>>(step, p, g, n);
  } else {
    SgdMomentumKernel<<<Blocks(n), kThreads, 0, stream>>>(step, p, g, v, n);
  }
  return cudaGetLastError();
}

cudaError_t LaunchAdamStep(const AdamStep& step, float* p, const float* g,
                           float* m, float* v, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AdamKernel<<<Blocks(n), kThreads, 0, stream>>>(step, p, g, m, v, n);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace ringside
