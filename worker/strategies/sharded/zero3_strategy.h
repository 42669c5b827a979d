// Zero3Strategy ("zero3"): ZeRO stage 3 / FSDP (Rajbhandari et al., SC'20;
// PyTorch FSDP) over the job's Gloo group (NCCL on CUDA workers). Its units
// are FSDP's wrapped modules: adjacent tensors grouped up to
// --zero3_unit_kb (as ring groups its buckets, the last tensors first; 0:
// one tensor per unit). Each rank keeps only its piece of every unit (each
// unit cut evenly across the ranks, FSDP's FULL_SHARD; with
// --zero_layout=contiguous, byte-balanced shards of the whole buffer, where
// a unit mostly lies in one rank's shard) of the parameters, of the
// averaged gradients and of the optimizer state (ShardedOptimizer); the
// rest of the flat buffers is given back to the operating system (CPU:
// madvise(MADV_DONTNEED) on the pages wholly outside the pieces; CUDA:
// their device pages unmapped, below) and gathered unit by unit when the model needs it:
//
//   forward    before the model reads a tensor of unit u: all-gather unit u
//              (the next unit's all-gather is already queued: prefetch);
//              after the last forward read of u's tensors: free it, unless
//              backward reads it next (FSDP keeps the last unit);
//   backward   before the model reads a tensor of u again: all-gather u
//              again; once every gradient of u is final: free u's
//              parameters and reduce-scatter u's gradients (average), then
//              free the gradients outside this rank's pieces --
//              overlapping the rest of backward;
//   FinishStep waits for the reduce-scatters and steps the optimizer on
//              this rank's pieces.
//
// The model reports where it reads parameters through the parameter-use
// hooks (models/model.h; ParamUse()); the training loop refuses a model or
// backend that cannot. The prefetch order is the order step 0 asked for
// units in, the same on every rank. Moves
// 3(n-1)/n of the buffer per step (two all-gathers, one reduce-scatter)
// when backward reads every tensor; the MLP's first layer is not read in
// backward. Shutdown all-gathers the whole buffer, so every rank ends with
// bit-identical parameters for evaluation and the oracle.
//
// CUDA workers (SupportsDevice(kCuda); run at one worker on an H100 and an
// H200 by tools/gpu_check.sh, docs/GPU_RESULTS.md, never at two or more):
// the same steps on the device buffers, the collectives over the job's
// NCCL group from the communication thread, the shard's optimizer on the
// device (ShardedOptimizer). The model's hooks run as it ENQUEUES kernels
// (models/cuda/cuda_model.h), so the order is kept with events
// (Zero3DeviceOrder, zero3_device_order.h): needed(i) waits for gather i's
// ticket and makes the compute stream wait for its event; a release records an
// event on the compute stream that the next all-gather into that region waits
// for; gradient i's reduce-scatter waits for grad_ready_event(i). The
// backend maps the buffers page by page for zero3 (SyncContext::param_pages
// and grad_pages, device/mapped_device_buffer.h; never yet run at two or
// more workers): Init keeps this rank's pieces held for good and gives the
// other pages back; a unit's parameter pages are held from its gather's
// queueing to its release (unmapped once the compute stream has passed the
// release), its gradient pages from the model's writes_gradient to its
// reduce-scatter's return; evaluations and the final gather hold the whole
// buffer. A device that cannot map page by page keeps whole buffers, and
// PeakParamBytes / PeakGradBytes then count what zero3 holds logically
// ("memory_saving":"counted_not_realised", worker/cuda_backend.h). No
// checkpoints there (refused, as zero1/zero2's).
//
// Memory: PeakParamBytes / PeakGradBytes report the most bytes held at once
// during the steps (the shard plus the tensors gathered or written and not
// yet freed); the process's peak RSS still includes the whole buffers that
// the backend fills before Init (every rank seeds the whole model).
// Checkpoints (CPU): every rank writes its own pieces, as zero1/zero2;
// --resume reshards a checkpoint of any number of workers and layout. Every wait is bounded by
// options.rpc_timeout. Timeline: ALLGATHER and REDUCE_SCATTER on each
// tensor's lane, OPTIMIZER and CHECKPOINT on lane "step".
// Not thread-safe (SyncStrategy contract); the hooks run on the training
// thread, the collectives on one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "worker/strategies/allreduce/gradient_buckets.h"
#include "worker/strategies/comm/sequenced_comm_thread.h"
#include "worker/strategies/sharded/sharded_gradients.h"
#include "worker/strategies/sharded/sharded_optimizer.h"
#include "worker/strategies/sharded/tensor_shards.h"
#include "worker/strategies/sharded/zero3_device_order.h"
#include "worker/sync_strategy.h"

namespace ringside {

class Zero3Strategy final : public SyncStrategy {
 public:
  Zero3Strategy();
  ~Zero3Strategy() override;

  std::string name() const override { return "zero3"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  // All-gathers the whole buffer for an evaluation / frees it again.
  absl::Status PrepareEvaluation() override;
  absl::Status EndEvaluation() override;
  int64_t start_step() const override { return sharded_.start_step; }
  bool SupportsDevice(Device device) const override {
    return device == Device::kCpu || device == Device::kCuda;
  }
  int64_t OptimizerStateBytes() const override {
    return sharded_.optimizer == nullptr ? 0
                                         : sharded_.optimizer->state_bytes();
  }
  const ParamUseHooks* ParamUse() const override { return &hooks_; }
  int64_t PeakParamBytes() const override { return peak_param_bytes_; }
  int64_t PeakGradBytes() const override {
    return gradients_ == nullptr ? -1 : gradients_->peak_bytes();
  }

 private:
  // The parameter-use hooks.
  void Needed(int tensor);
  void ForwardDone(int tensor);
  void WritesGradient(int tensor);
  // [offset, offset + size) of `unit`.
  KeyRange UnitRange(int unit) const;
  // Queues the all-gather of `unit`'s parameters unless they are here or
  // on their way.
  void QueueGather(int unit);
  // Frees `unit`'s parameters outside this rank's pieces (after waiting
  // for a gather still on its way).
  void ReleaseParams(int unit);
  // The freeing itself: CPU, the pages go (TensorShards::Release); CUDA,
  // an event per tensor after the kernels enqueued so far
  // (Zero3DeviceOrder).
  absl::Status GiveBack(int unit);
  // CUDA, page by page (SyncContext::param_pages / grad_pages; no-ops when
  // null): at Init, keep only this rank's pieces mapped (held for good);
  // a hold on `unit`'s range of `pages`, and the drop of one (unmapped
  // after the kernels enqueued so far on the compute stream); errors name
  // `what` and the unit.
  absl::Status KeepOnlyPieces();
  // "<first tensor>'s unit in step <step>", for errors.
  std::string UnitInStep(int unit) const;
  absl::Status HoldUnitPages(MappedDeviceBuffer* pages, int unit,
                             const char* what);
  absl::Status DropUnitPages(MappedDeviceBuffer* pages, int unit,
                             const char* what);
  // All-gathers every shard into the whole buffer on the comm thread and
  // waits (rpc_timeout); errors name `what` ("the final parameters").
  absl::Status GatherWholeBuffer(const std::string& what);
  void Fail(absl::Status error);
  void NoteParams(int64_t delta);

  ParamUseHooks hooks_;
  SyncContext context_;
  ShardedStart sharded_;  // the group, the optimizer, the step to start at
  const TensorShards* shards_ = nullptr;  // sharded_.optimizer's plan
  std::unique_ptr<SequencedCommThread> comm_;
  std::unique_ptr<ShardedGradients> gradients_;
  std::unique_ptr<Zero3DeviceOrder> device_;  // CUDA workers only
  // The units (GradientBucket: adjacent tensors, in backward's order), each
  // tensor's unit and each unit's counts (each rank's share).
  std::vector<GradientBucket> units_;
  std::vector<int> unit_of_;
  std::vector<std::vector<int64_t>> unit_counts_;
  // Per unit: the ticket of the gather that brought its parameters (-1:
  // freed); this step's tensors done with in forward and gradients final;
  // whether its forward ended since it was last asked for.
  std::vector<int64_t> gather_ticket_;
  // Per unit: whether its gradient pages are held this step (from
  // writes_gradient to the reduce-scatter's queueing); whether the whole
  // parameter buffer is held (an evaluation's or the final gather).
  std::vector<bool> grads_held_;
  bool whole_held_ = false;
  std::vector<int> forward_done_;
  std::vector<int> grads_ready_;
  std::vector<bool> forward_closed_;
  int last_unit_ = -1;  // the unit last asked for this step
  // The units step 0 asked for, visit by visit (forward, then backward),
  // and where this step is in it; prefetching stops for the step at the
  // first request that departs from it.
  std::vector<int> sequence_;
  bool recorded_ = false;
  size_t position_ = 0;
  bool prefetching_ = false;
  int64_t step_ = 0;    // the step the hooks belong to
  absl::Status error_;  // the hooks' first failure, for FinishStep
  double hook_wait_s_ = 0;
  int64_t gathered_bytes_ = 0;           // this step's all-gathers, each way
  int64_t gathered_critical_bytes_ = 0;  // and PipelinedRingCriticalBytes
  int64_t param_bytes_ = 0;              // held now
  int64_t peak_param_bytes_ = -1;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_SHARDED_ZERO3_STRATEGY_H_
