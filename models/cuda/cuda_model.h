// CudaModel: what the CUDA training backend (worker/cuda_backend.h) needs of
// a model on one GPU -- the device-side twin of models/model.h's Model.
// CudaMlp (cuda_mlp.h) and CudaCharLm (models/transformer/cuda/) implement
// it; the contract of each call (device buffers, streams, readiness events
// recorded before on_ready, CUDA-event compute time) is spelled out in
// cuda_mlp.h and holds for every implementation:
//
//   - parameters and gradients are caller-owned flat device buffers of
//     layout().total_elements() floats on device();
//   - ForwardBackward enqueues the step on `stream`, records
//     grad_ready_event(i) right after the kernels that finish gradient i and
//     then calls on_ready(i): the gradient is ENQUEUED, not computed;
//   - last_compute_seconds() is the device time of the last step's kernels;
//   - parameter use (ReportsParamUse models: CudaMlp per tensor, CudaCharLm
//     as one unit), for zero3 on a device: models/model.h's parameter-use
//     contract, with "reads" meaning the kernels ENQUEUED on `stream`. The
//     hooks run on the calling thread at enqueue time: needed(i) before the
//     first kernel that reads parameters i is enqueued (the hook orders
//     `stream` after whatever writes them), forward_done(i) after the last
//     forward kernel reading them is enqueued (the kernels may still be
//     queued or running: a hook that lets parameters i be overwritten
//     orders that after an event it records on `stream`); writes_gradient(i)
//     before the first kernel that writes gradient i is enqueued (until then
//     gradient i's memory may not be there: zero3 maps it page by page).
//
// This header needs no CUDA headers (handles are opaque,
// device/cuda_handles.h). Thread-compatible: one instance per worker thread.
#ifndef RINGSIDE_MODELS_CUDA_CUDA_MODEL_H_
#define RINGSIDE_MODELS_CUDA_CUDA_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_layout.h"
#include "device/cuda_handles.h"
#include "models/dataset.h"
#include "models/model.h"
#include "models/precision.h"

namespace ringside {

// A batch's arrays already in device memory (worker/batch_stager.h): the
// Batch's features, labels and tokens, each null when the batch has none.
// Whoever hands it to a model has made the model's stream wait for the
// copies.
struct DeviceBatch {
  int64_t size = 0;
  const float* features = nullptr;
  const int32_t* labels = nullptr;
  const int32_t* tokens = nullptr;
};

class CudaModel {
 public:
  virtual ~CudaModel() = default;

  // The model's name as the CPU model's Model::name() gives it ("mlp",
  // "charlm"); final records carry it.
  virtual std::string name() const = 0;
  virtual const TensorLayout& layout() const = 0;
  virtual int device() const = 0;
  // The arithmetic of its compute (models/precision.h); the final record
  // names it. float32 unless the model was made for another.
  virtual Precision precision() const { return Precision::kFp32; }

  // The CPU model's seeded initial parameters, into host memory (same seed
  // => same bits as the CPU model's InitParams). Aborts if the size is
  // wrong.
  virtual void InitParams(uint64_t seed,
                          absl::Span<float> host_params) const = 0;
  // The same, copied into the device buffer `d_params`. Blocking.
  virtual absl::Status InitDeviceParams(uint64_t seed,
                                        float* d_params) const = 0;

  // Forward and backward of `batch` (host memory; copied in) under
  // `d_params`; writes d(mean loss)/d(params) into `d_grads` (every element)
  // and returns the mean loss; on_ready (may be empty) as above. Blocking:
  // returns once the step's work on `stream` is done. INVALID_ARGUMENT for
  // a batch that does not fit or a null pointer; CUDA/cuBLAS errors with
  // their message otherwise (a fault in a kernel shows up here). After an
  // error the gradients are undefined and some on_ready calls may have
  // happened.
  virtual absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const float* d_params, float* d_grads,
      const GradientReadyFn& on_ready, CudaStream stream) = 0;

  // The next ForwardBackward, when its batch has staged.size examples,
  // reads its input from `staged` (the same data as the batch's host
  // arrays, already copied and ordered before work on its stream) instead
  // of copying the batch's; that call consumes it. A model that cannot
  // (the default) ignores it and copies as before.
  virtual void UseStagedInput(const DeviceBatch& staged) { (void)staged; }

  // Mean loss of `batch` under `d_params`; no gradients, no timing.
  // Blocking.
  virtual absl::StatusOr<double> Evaluate(const Batch& batch,
                                          const float* d_params,
                                          CudaStream stream) = 0;

  // The event recorded once gradient `tensor` is enqueued. Owned by the
  // model. Requires 0 <= tensor < layout().num_tensors().
  virtual CudaEvent grad_ready_event(int tensor) const = 0;

  // Device time of the last ForwardBackward's kernels, seconds (0 before
  // the first).
  virtual double last_compute_seconds() const = 0;

  // As the CPU model's FlopsPerExample.
  virtual double FlopsPerExample() const = 0;

  // Whether ForwardBackward reports parameter use (the file comment);
  // false by default.
  virtual bool ReportsParamUse() const { return false; }
  // The hooks later ForwardBackward calls use (not owned; they must outlive
  // those calls); null: none. Evaluate calls none. Ignored unless
  // ReportsParamUse.
  virtual void SetParamUseHooks(const ParamUseHooks* hooks) { (void)hooks; }
};

}  // namespace ringside

#endif  // RINGSIDE_MODELS_CUDA_CUDA_MODEL_H_
