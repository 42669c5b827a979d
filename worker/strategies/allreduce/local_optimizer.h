// The optimizer the ranks apply themselves to their averaged gradients (on
// the host or on a CUDA device) with its per-step report, its checkpoint
// and resume over a broadcast from rank 0, and the start shared by the
// strategies whose ranks do so.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_OPTIMIZER_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collectives/collective.h"
#include "core/key_range.h"
#include "models/cuda/cuda_optimizer.h"
#include "models/optimizer.h"
#include "worker/sync_strategy.h"

namespace ringside {

// Applies `optimizer` to the averaged gradients and reports the step: the
// optimizer time, and the bytes a ring all-reduce of the whole buffer moves
// out of and into each rank (2(n-1)/n of it).
StepStats ApplyAveragedGradients(const SyncContext& context,
                                 Optimizer& optimizer, int64_t step);

// On rank 0, when context.options.checkpoint_every divides step + 1: writes
// the parameters and optimizer state after `step` to
// AllReduceCheckpointPath(checkpoint_dir) (atomic, checksummed).
absl::Status MaybeWriteCheckpoint(const SyncContext& context,
                                  Optimizer& optimizer, int64_t step);

// Sends rank 0's `data` to every rank of the job (a collective call: every
// rank calls it with a buffer of the same size), bounded by `timeout`.
using RootBroadcast =
    std::function<absl::Status(absl::Span<float> data, absl::Duration timeout)>;
// RootBroadcast over `collective`, whose rank 0 is the job's; null (one
// worker): nothing to send.
RootBroadcast BroadcastOver(Collective* collective);

// When context.options.resume: rank 0 reads the job's checkpoint and every
// rank receives its parameters (into context.params), optimizer state and
// step through `broadcast`. Returns the step to start at (0 without
// resume). Collective: every rank calls it; if rank 0 cannot load the
// checkpoint every rank fails, rank 0 with the reason.
absl::StatusOr<int64_t> ResumeIfAsked(const SyncContext& context,
                                      const RootBroadcast& broadcast,
                                      Optimizer& optimizer);

// Enqueues optimizer.Apply on `stream` for each of `pieces` of the flat
// device buffers `params` and `grads` (state offsets running over the
// pieces in order) between the timing events `start` and `stop`, waits
// for `stop` and returns the update's device seconds: the update is final
// on return.
absl::StatusOr<double> ApplyOnDeviceTimed(CudaOptimizer& optimizer,
                                          float* params, const float* grads,
                                          absl::Span<const KeyRange> pieces,
                                          int64_t step, CudaStream stream,
                                          CudaEvent start, CudaEvent stop);

// The optimizer each rank applies to its averaged gradients, on
// context.device: the host Optimizer (ApplyAveragedGradients) on kCpu; a
// CudaOptimizer on kCuda, enqueued on context.compute_stream and timed with
// CUDA events (local_optimizer_s is device time), waited for before Step
// returns. Not thread-safe.
class LocalOptimizer {
 public:
  // `context` (its spans) must outlive the optimizer. Blocking.
  static absl::StatusOr<std::unique_ptr<LocalOptimizer>> Create(
      const SyncContext& context);
  // The host rule `optimizer` (a strategy's own, e.g. 1-bit Adam's) in
  // place of context.optimizer's; context.device must be kCpu.
  static std::unique_ptr<LocalOptimizer> OnHost(
      const SyncContext& context, std::unique_ptr<Optimizer> optimizer);
  virtual ~LocalOptimizer() = default;
  // Updates context.params from context.grads (final, averaged) for
  // `step`; blocking. Stats as ApplyAveragedGradients.
  virtual absl::StatusOr<StepStats> Step(int64_t step) = 0;
  // ResumeIfAsked for this optimizer's state (call after Init's broadcast
  // of the initial parameters); returns the step to start at.
  virtual absl::StatusOr<int64_t> Resume(const RootBroadcast& broadcast) = 0;
  // Bytes of optimizer state it holds (host or device memory).
  virtual int64_t state_bytes() const = 0;
  // A copy of its state and its inverse, for a rank's own checkpoint
  // (local_sgd's); UNIMPLEMENTED on a CUDA device, INVALID_ARGUMENT for
  // state of another length.
  virtual absl::StatusOr<std::vector<float>> ExportState() = 0;
  virtual absl::Status ImportState(absl::Span<const float> state) = 0;
};

// The start every strategy whose ranks apply the optimizer themselves
// shares (baseline, ring and its hooks, fusion, hierarchical; zero1-3 use
// StartSharded): rank 0's initial parameters broadcast (over `collective`,
// null: one worker, nothing to agree on; or by `broadcast`, e.g.
// hierarchical's across hosts then within each), the local optimizer on
// `context` (the strategy's own copy, which the optimizer keeps a
// reference to; `optimizer` when given, else LocalOptimizer::Create's) and
// the step to start at (LocalOptimizer::Resume: the checkpoint's when
// --resume, else 0). Collective: every rank calls it. Blocking, bounded by
// rpc_timeout.
struct LocalStart {
  std::unique_ptr<LocalOptimizer> optimizer;
  int64_t start_step = 0;
};
absl::StatusOr<LocalStart> StartLocal(
    const SyncContext& context, Collective* collective,
    std::unique_ptr<LocalOptimizer> optimizer = nullptr);
absl::StatusOr<LocalStart> StartLocal(
    const SyncContext& context, const RootBroadcast& broadcast,
    std::unique_ptr<LocalOptimizer> optimizer = nullptr);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_OPTIMIZER_H_
