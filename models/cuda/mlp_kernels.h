// The element-wise and reduction kernels of the CUDA MLP and of the device
// optimizers (the matrix products are cuBLAS's). Each Launch* enqueues one
// kernel on `stream` and returns at once with the launch's own error
// (cudaGetLastError: bad configuration, no device, ...); a fault inside the
// kernel shows up at the next synchronization. Nothing is launched for an
// empty input. Matrices are row-major; sizes are element counts.
//
// The optimizer steps round every operation exactly as models/optimizer.cc
// does on the host (no fused multiply-add, IEEE division and square root,
// same order), so a device step equals a host step bit for bit given equal
// inputs and host float arithmetic (x86-64 SSE, no FMA contraction).
//
// Only compiled with --config=cuda (nvcc; see tools/cuda.bzl), hence no absl
// here: wrap the results with device/cuda_status.h. Thread-safe.
#ifndef RINGSIDE_MODELS_CUDA_MLP_KERNELS_H_
#define RINGSIDE_MODELS_CUDA_MLP_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ringside {
namespace kernels {

// z[r][c] += bias[c] for a rows x cols z; then z = max(z, 0) if `relu`.
cudaError_t LaunchAddBias(float* z, const float* bias, int64_t rows,
                          int64_t cols, bool relu, cudaStream_t stream);

// ReLU backward through an activation y = max(x, 0):
// dy[i] = y[i] > 0 ? dy[i] : 0 for i in [0, n).
cudaError_t LaunchReluBackward(float* dy, const float* y, int64_t n,
                               cudaStream_t stream);

// Softmax cross-entropy of a rows x cols matrix of logits z with labels in
// [0, cols) (unchecked): row_loss[r] = lse(z[r]) - z[r][labels[r]], with
// lse(x) = max(x) + log(sum(exp(x - max(x)))). With `want_gradient`, z is
// overwritten by grad_scale * d(sum of row losses)/dz, i.e.
// exp(z - lse) * grad_scale, minus grad_scale at the label (pass
// 1 / rows for the gradient of the mean loss, as models/mlp.cc does).
cudaError_t LaunchSoftmaxCrossEntropy(float* z, const int32_t* labels,
                                      int64_t rows, int64_t cols,
                                      float grad_scale, bool want_gradient,
                                      float* row_loss, cudaStream_t stream);

// PyTorch's SGD (dampening 0, no Nesterov), as SgdOptimizer::Apply:
// g' = g + weight_decay * p; v = momentum * v + g'; p -= lr * v.
// `v` == nullptr: plain SGD, p -= lr * g' (momentum unused).
struct SgdStep {
  float lr;
  float momentum;
  float weight_decay;
};
cudaError_t LaunchSgdStep(const SgdStep& step, float* p, const float* g,
                          float* v, int64_t n, cudaStream_t stream);

// Adam, as AdamOptimizer::Apply: g' = g + weight_decay * p;
// m = b1 m + (1 - b1) g'; v = b2 v + (1 - b2) g' g';
// p -= lr * (m / bias_correction1) / (sqrt(v / bias_correction2) + eps),
// with bias_correction_k = 1 - beta_k^step computed on the host in double
// and rounded to float (as optimizer.cc does).
struct AdamStep {
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
  float bias_correction1;
  float bias_correction2;
};
cudaError_t LaunchAdamStep(const AdamStep& step, float* p, const float* g,
                           float* m, float* v, int64_t n, cudaStream_t stream);

}  // namespace kernels
}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_MLP_KERNELS_H_
