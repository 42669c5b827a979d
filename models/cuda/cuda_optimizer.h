// CudaOptimizer: the optimizers of models/optimizer.h (SGD with momentum and
// weight decay, Adam) as element-wise kernels on CUDA device memory, with
// their state (velocity; Adam's two moments) in device memory too. Same
// semantics as Optimizer::Apply: state for `num_elements` parameters, each
// Apply updates a range [state_offset, state_offset + count) of it, `step`
// counts updates from 1 (Adam's bias correction). Every operation rounds as
// on the host (mlp_kernels.h), so a device step equals the host step bit for
// bit on equal inputs.
//
// Apply only enqueues (asynchronous) on the caller's stream: the update is
// final when that stream has reached it. d_params and d_grads are device
// memory on device(); make `stream` wait for their producers first (e.g. the
// all-reduce of the gradients on a comm stream).
//
// Built with --config=cuda this is real (cuda_optimizer.cc); without it
// Create returns UNIMPLEMENTED "built without CUDA (bazel build
// --config=cuda)". Thread-safety: Apply on disjoint ranges may be called
// concurrently (each enqueues one kernel); on overlapping ranges the caller
// orders them on the device (one stream).
#ifndef RINGSIDE_MODELS_CUDA_CUDA_OPTIMIZER_H_
#define RINGSIDE_MODELS_CUDA_CUDA_OPTIMIZER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/cuda_handles.h"
#include "models/optimizer.h"

namespace ringside {

class CudaOptimizer {
 public:
  // The optimizer named by config.type, with zeroed state for
  // `num_elements` parameters on CUDA device `device`. Blocking.
  // INVALID_ARGUMENT on a bad config; CUDA's errors (RESOURCE_EXHAUSTED
  // when the state does not fit).
  static absl::StatusOr<std::unique_ptr<CudaOptimizer>> Create(
      const OptimizerConfig& config, int64_t num_elements, int device = 0);

  virtual ~CudaOptimizer() = default;

  // Enqueues one update of d_params[0, count) from d_grads[0, count) with
  // state elements [state_offset, state_offset + count) on `stream`.
  // Non-blocking. INVALID_ARGUMENT if the state range is outside
  // [0, num_elements), step < 1, or a pointer is null while count > 0;
  // CUDA's launch errors.
  virtual absl::Status Apply(int64_t state_offset, float* d_params,
                             const float* d_grads, int64_t count, int64_t step,
                             CudaStream stream) = 0;

  virtual const OptimizerConfig& config() const = 0;
  virtual int device() const = 0;
  // Bytes of device state (for memory reports).
  virtual int64_t state_bytes() const = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_CUDA_OPTIMIZER_H_
