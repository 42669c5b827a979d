// FusionRuntime: a Horovod-style background runtime that all-reduces
// (averages) gradient tensors in place as the model reports them ready.
//
//   training thread                  background thread, every cycle_time
//   ───────────────                  ─────────────────────────────────────
//   Enqueue(i) during backward  ──►  1. drain the tensor queue
//                                    2. all-reduce one bit per cached tensor
//                                       (+ flags): cached tensors set on all
//                                       ranks are ready
//                                    3. if any rank has uncached tensors:
//                                       requests to the coordinator (rank
//                                       0), which answers every rank with
//                                       the tensors now ready everywhere
//                                    4. fuse ready tensors into batches of
//                                       <= fusion_threshold_bytes; one
//                                       all-reduce per batch (in place when
//                                       contiguous, else via the persistent
//                                       fusion buffer); cache new responses
//   WaitForReduced(n) ◄──────────── 5. count reduced tensors
//
// Two lanes: with a second data collective (`overlap_data`, same ranks) a
// cycle that has two or more batches reduces them two at a time, even
// batches on `data` and odd ones on `overlap_data`, each lane with its own
// part of the fusion buffer, so one batch's all-reduce fills the other's
// idle moments (ResNet-50's 102 MB is two 64 MiB-bounded batches). Host
// memory only: with a FusionMemory the batches go one after another.
//
// Every rank issues the same collectives in the same order even when its
// tensors became ready in a different order.
//
// Memory (fusion_memory.h): by default the gradients and the fusion buffer
// are host memory. With a FusionMemory (e.g. CUDA device memory with an NCCL
// `data` collective) the runtime asks memory->Ready(i) in step 1 and keeps a
// tensor whose producer has not finished back until a later cycle, and
// copies through memory->Buffer/Copy; the `control` collective stays a CPU
// one (its messages are host vectors). A tensor submitted by some
// ranks and not others for stall_warning is reported naming the missing
// ranks (on rank 0). Every collective is bounded by `timeout`; after an
// error the runtime stops and every wait returns that error.
//
// Thread-safety: Enqueue, WaitForReduced, stats and Shutdown may be called
// from any one thread (the worker's training thread); the collectives are
// used only by the background thread.
#ifndef RINGSIDE_COLLECTIVES_FUSION_FUSION_RUNTIME_H_
#define RINGSIDE_COLLECTIVES_FUSION_FUSION_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collectives/collective.h"
#include "collectives/fusion/coordinator.h"
#include "collectives/fusion/fusion_memory.h"
#include "collectives/fusion/fusion_options.h"
#include "collectives/fusion/fusion_plan.h"
#include "collectives/fusion/response_cache.h"
#include "common/timeline.h"
#include "core/tensor_layout.h"

namespace ringside {

struct FusionStats {
  int64_t cycles = 0;
  int64_t negotiations = 0;  // cycles with a request round
  int64_t cache_hits = 0;    // tensors submitted as a cached bit
  int64_t cache_misses = 0;  // tensors submitted as a request
  int64_t batches = 0;       // data all-reduces issued
  int64_t in_place_batches = 0;
  int64_t second_lane_batches = 0;  // of `batches`, on overlap_data
  int64_t bytes_copied = 0;  // into and out of the fusion buffer
  int64_t stalls_reported = 0;
};

class FusionRuntime {
 public:
  // Checks that every rank has the same layout (FAILED_PRECONDITION naming
  // the first rank that differs) and starts the background thread.
  // `control` carries negotiation (a CPU collective); `data` reduces
  // `grads` (may be the same object). Neither is owned; both, and `grads`,
  // must outlive the runtime. `memory` (not owned; null: host memory) says
  // how `grads` is read, copied and known final; it must outlive the
  // runtime. `overlap_data` (not owned; may be null: one lane) is a second
  // data collective over the same ranks, distinct from `data` and
  // `control`, for the second lane; every rank passes one or none.
  // Collective: all ranks call Start.
  static absl::StatusOr<std::unique_ptr<FusionRuntime>> Start(
      Collective* control, Collective* data, const TensorLayout& layout,
      absl::Span<float> grads, FusionOptions options,
      FusionMemory* memory = nullptr, Collective* overlap_data = nullptr);
  ~FusionRuntime();  // stops the thread without agreeing with peers

  // Tensor `index`'s gradient is final (or, with a FusionMemory, will be
  // once memory->Ready(index) says so): reduce it. Never blocks for long.
  void Enqueue(int index);

  // Blocks until `count` more tensors have been reduced since the last
  // successful wait, then consumes them. DEADLINE_EXCEEDED after `timeout`;
  // the runtime's error if it stopped.
  absl::Status WaitForReduced(int count, absl::Duration timeout);

  // Agrees with every rank to stop, joins the thread; bounded by the
  // collectives' timeout. Returns the runtime's error, if any.
  absl::Status Shutdown();

  FusionStats stats() const;

 private:
  struct Queued {
    int index;
    double enqueue_s;
  };
  FusionRuntime(Collective* control, Collective* data,
                Collective* overlap_data, const TensorLayout& layout,
                absl::Span<float> grads, FusionOptions options,
                FusionMemory* memory);
  void Loop();
  // One cycle; sets *stop when every rank asked to shut down.
  absl::Status RunCycle(bool* stop);
  absl::StatusOr<std::vector<int>> Negotiate();
  absl::Status ProbeCachedStalls(double now_s);
  absl::Status Execute(const std::vector<int>& ready, double decided_s);
  // Reduces `batches` in order on `data`, copying through `buffer` where a
  // batch is not in place; counts into *stats. Safe to run on two lanes at
  // once (distinct collectives, buffers and stats).
  absl::Status RunLane(const std::vector<FusedBatch>& batches,
                       Collective* data, absl::Span<float> buffer,
                       double decided_s, FusionStats* stats);
  void ReportStall(const StallReport& report);

  Collective* const control_;
  Collective* const data_;
  Collective* const overlap_data_;  // second lane; null: one lane
  const TensorLayout layout_;
  const absl::Span<float> grads_;
  const FusionOptions options_;
  const int rank_;
  const int world_size_;

  // Background thread only.
  ResponseCache cache_;
  Coordinator coordinator_;            // used on rank 0
  std::map<int, double> pending_bits_;  // cached bit -> enqueue time
  std::vector<Queued> new_requests_;    // uncached, not yet sent
  std::vector<double> enqueue_s_;       // per tensor, this step
  std::vector<Queued> not_ready_;       // enqueued, memory not yet final
  HostFusionMemory host_memory_;        // used when no memory was given
  FusionMemory* const memory_;
  double last_probe_s_ = 0.0;
  FusionStats local_stats_;

  mutable absl::Mutex mu_;
  std::vector<Queued> queue_ ABSL_GUARDED_BY(mu_);
  int64_t reduced_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool abandon_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  FusionStats stats_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_FUSION_FUSION_RUNTIME_H_
