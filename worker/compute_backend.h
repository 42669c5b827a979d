// ComputeBackend: where one worker's model computes -- host memory
// (HostBackend, worker/host_backend.h) or one CUDA device (CudaBackend,
// worker/cuda_backend.h) -- as the one training loop (RunTraining,
// worker/trainer.h) sees it. A backend owns the model's parameter and
// gradient buffers and whatever runs the model there (a compute stream,
// readiness events, NVML sampling); the loop owns the steps, the strategy's
// life cycle, the step records and the final record.
//
// Call order, from RunTraining: Init, Adapt, then per step BeginStep,
// (PrepareBatch on the prefetcher's thread, when PrefetchesBatches),
// ForwardBackward and ComputeSeconds once per pass (with gradient
// accumulation, StashGradients after each pass but the last and
// FoldStashedGradient as the last pass's gradients become ready); EndSteps;
// the strategy's Shutdown;
// Evaluate, FinalParams, model_name and RecordFields. Blocking; not thread-safe
// (one backend per worker thread/process, with its own model).
#ifndef RINGSIDE_WORKER_COMPUTE_BACKEND_H_
#define RINGSIDE_WORKER_COMPUTE_BACKEND_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/dataset.h"
#include "models/model.h"
#include "worker/sync_strategy.h"

namespace ringside {

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  // Allocates the parameter and gradient buffers, sets the parameters to
  // the model's seeded initial values (`init_seed`, every rank alike) and
  // the gradients to 0, and describes them in `context`: layout, params,
  // grads and, on a device, device, cuda_device, compute_stream and
  // grad_ready_event. Once, before any call but InstallParamUse (hooks
  // installed before it change how the buffers are allocated: CudaBackend
  // maps its buffers page by page for them).
  virtual absl::Status Init(uint64_t init_seed, SyncContext& context) = 0;

  // The strategy the loop drives for `strategy`: `strategy` itself where it
  // supports this backend's buffers, else an adapter owned by the backend
  // (the CUDA backend's host staging). Once, after Init.
  virtual SyncStrategy& Adapt(SyncStrategy& strategy) = 0;

  // Makes the model call `hooks` (models/model.h's parameter-use contract;
  // null: none) in later ForwardBackward calls. Default: UNIMPLEMENTED for
  // any hooks (a backend whose model cannot report parameter use).
  virtual absl::Status InstallParamUse(const ParamUseHooks* hooks) {
    if (hooks == nullptr) return absl::OkStatus();
    return absl::UnimplementedError(
        "this backend's models do not report parameter use (models/model.h), "
        "which a strategy keeping the parameters sharded needs");
  }

  // Before step `step` reads its batch; `measured` when the step counts in
  // the measures (past the warm-up).
  virtual void BeginStep(int64_t step, bool measured) = 0;

  // Whether the loop reads the training batches one pass ahead, on a
  // thread of its own (worker/batch_prefetcher.h), calling PrepareBatch
  // there with each batch it has read (a device backend stages it into
  // device memory). False by default: a host backend's compute shares the
  // cores, and reads its batches in line.
  virtual bool PrefetchesBatches() const { return false; }
  virtual absl::Status PrepareBatch(const Batch& batch) {
    (void)batch;
    return absl::OkStatus();
  }

  // Forward and backward of `batch` under the parameters, writing the
  // gradients; on_ready(i) as gradient i becomes final (host) or is queued
  // (CUDA: SyncContext::grad_ready_event(i) says when it is final). The
  // mean loss.
  virtual absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const GradientReadyFn& on_ready) = 0;

  // The model's compute time in the last ForwardBackward, which took
  // `wall_s` seconds on the steady clock: that wall time on the host, the
  // kernels' time from CUDA events on a device.
  virtual double ComputeSeconds(double wall_s) const = 0;

  // The model's own CPU time in the last ForwardBackward, in which the
  // calling thread used `thread_cpu_s` seconds of CPU: that, where the
  // model computes on the calling thread alone (the host with one Eigen
  // thread, real compute; emulated compute, whose sleep takes none and
  // whose synthetic gradients take some); −1 where it cannot be told (the
  // default: a device, compute spread over threads). Unlike the
  // wall time it leaves out the time the thread waited for a core, which
  // other threads on the same cores took (async_ps's background rounds,
  // the servers): the cost model's contention-free t_c.
  virtual double ComputeCpuSeconds(double thread_cpu_s) const {
    (void)thread_cpu_s;
    return -1;
  }

  // Gradient accumulation over `passes` > 1 forward/backward passes per
  // step (TrainerOptions::accumulate_steps). After each pass but the last,
  // StashGradients keeps the running sum of the gradients in a stash of the
  // backend's own (`first`: the step's first pass, whose gradients it
  // copies). In the last pass, FoldStashedGradient(i, passes), called as
  // gradient i becomes ready and before the strategy sees it, makes
  // gradient i (gradient + stash) * (1 / passes): the gradient of the mean
  // loss over all the passes' examples. Both use the same float operations
  // on every backend; on a device they are queued on the compute stream
  // and FoldStashedGradient records grad_ready_event(i) again after its
  // work.
  virtual absl::Status StashGradients(bool first) = 0;
  virtual absl::Status FoldStashedGradient(int tensor, int passes) = 0;
  // Bytes of the stash (0 until StashGradients first ran).
  virtual int64_t StashBytes() const = 0;

  // Stragglers: makes the model's later passes take `factor` times their
  // emulated compute (Model::ScaleEmulatedCompute); false (default) when
  // the compute is real, which the loop then stretches by waiting.
  virtual bool ScaleEmulatedCompute(double factor) {
    (void)factor;
    return false;
  }

  // After the last step, before the strategy shuts down.
  virtual void EndSteps() = 0;

  // Mean loss of `batch` under the final parameters (after the strategy
  // has shut down).
  virtual absl::StatusOr<double> Evaluate(const Batch& batch) = 0;

  // The final parameters in host memory. Once, after Evaluate.
  virtual absl::StatusOr<std::vector<float>> FinalParams() = 0;

  // The model's own name ("mlp", "charlm", ...), for the final record.
  virtual std::string model_name() const = 0;

  // The final record's fields that describe this backend: "emulated",
  // "device" and "timing", and a backend's own (CUDA: "gpu", "gpu_name",
  // "host_staging", NVML's "utilization_check" and "nvml_utilization").
  // After FinalParams.
  virtual nlohmann::json RecordFields() const = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_COMPUTE_BACKEND_H_
