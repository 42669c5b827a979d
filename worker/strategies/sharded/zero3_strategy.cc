#include "worker/strategies/sharded/zero3_strategy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/sharded/zero_options.h"

namespace ringside {

Zero3Strategy::Zero3Strategy() {
  hooks_.needed = [this](int tensor) { Needed(tensor); };
  hooks_.forward_done = [this](int tensor) { ForwardDone(tensor); };
}

Zero3Strategy::~Zero3Strategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status Zero3Strategy::Init(const SyncContext& context) {
  context_ = context;
  ShardPlan plan;
  if (context_.options.strategy.Get<ZeroOptions>().per_unit()) {
    // Each tensor is a unit (FSDP with one unit per tensor).
    std::vector<KeyRange> units;
    for (int t = 0; t < context_.layout.num_tensors(); ++t) {
      const TensorSpec& spec = context_.layout.tensor(t);
      units.push_back(KeyRange{spec.offset, spec.offset + spec.size});
    }
    std::sort(units.begin(), units.end(),
              [](const KeyRange& a, const KeyRange& b) {
                return a.begin < b.begin;
              });
    plan = PerUnitShardPlan(units, context_.world_size);
  } else {
    RS_ASSIGN_OR_RETURN(plan, ContiguousShardPlan(context_.layout,
                                                  context_.world_size));
  }
  RS_ASSIGN_OR_RETURN(sharded_,
                      StartSharded(context_, name(), std::move(plan)));
  step_ = sharded_.start_step;
  shards_ = &sharded_.optimizer->shards();
  gather_ticket_.assign(context_.layout.num_tensors(), -1);
  if (context_.device == Device::kCuda) {
    RS_ASSIGN_OR_RETURN(device_, Zero3DeviceOrder::Create(context_));
  }
  // From here on this rank holds its shard of the parameters only (and of
  // the gradients: ShardedGradients), logically on a device.
  for (int t = 0; t < context_.layout.num_tensors(); ++t) {
    RS_RETURN_IF_ERROR(GiveBack(t));
  }
  param_bytes_ = shards_->owned_elements() * 4;
  peak_param_bytes_ = param_bytes_;
  comm_ = std::make_unique<SequencedCommThread>();
  gradients_ = std::make_unique<ShardedGradients>(
      context_, *sharded_.collective, *shards_, *comm_, /*logical=*/true);
  return absl::OkStatus();
}

absl::Status Zero3Strategy::GiveBack(int tensor) {
  if (device_ != nullptr) return device_->Released(tensor);
  shards_->Release(context_.params, tensor);
  return absl::OkStatus();
}

void Zero3Strategy::Fail(absl::Status error) {
  if (error_.ok()) error_ = std::move(error);
}

void Zero3Strategy::NoteParams(int64_t delta) {
  param_bytes_ += delta;
  peak_param_bytes_ = std::max(peak_param_bytes_, param_bytes_);
}

void Zero3Strategy::QueueGather(int tensor) {
  if (gather_ticket_[tensor] >= 0) return;  // here or on its way
  NoteParams(shards_->outside_bytes(tensor));
  const TensorSpec& spec = context_.layout.tensor(tensor);
  gathered_bytes_ += ShardedPhaseBytes(spec.size * 4, context_.world_size);
  gathered_critical_bytes_ += PipelinedRingCriticalBytes(
      shards_->counts(tensor), RingPieceFloats(shards_->counts(tensor)));
  const int64_t step = step_;
  gather_ticket_[tensor] = comm_->Enqueue([this, tensor, step]() {
    const TensorSpec& spec = context_.layout.tensor(tensor);
    // CUDA: the kernels that read the region's old contents are done.
    if (device_ != nullptr) {
      RS_RETURN_IF_ERROR(
          device_->BeforeGather(tensor, context_.options.rpc_timeout));
    }
    const double start = NowSeconds();
    RS_RETURN_IF_ERROR(Annotate(
        sharded_.collective->AllGatherV(
            context_.params.subspan(spec.offset, spec.size),
            shards_->counts(tensor), context_.options.rpc_timeout),
        absl::StrCat("all-gather of ", spec.name, "'s parameters in step ",
                     step)));
    if (device_ != nullptr) RS_RETURN_IF_ERROR(device_->AfterGather(tensor));
    RecordSpan(context_.options.timeline, spec.name, "ALLGATHER", start,
               NowSeconds(), {{"step", step}, {"bytes", spec.size * 4}});
    return absl::OkStatus();
  });
}

void Zero3Strategy::ReleaseParams(int tensor) {
  const int64_t ticket = gather_ticket_[tensor];
  if (ticket < 0) return;
  // A gather still on its way must land before its pages go.
  if (absl::Status s = comm_->Wait(ticket, context_.options.rpc_timeout,
                                   "a parameter all-gather");
      !s.ok()) {
    Fail(std::move(s));
    return;
  }
  gather_ticket_[tensor] = -1;
  NoteParams(-shards_->outside_bytes(tensor));
  if (absl::Status s = GiveBack(tensor); !s.ok()) Fail(std::move(s));
}

void Zero3Strategy::Needed(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  if (!recorded_) sequence_.push_back(tensor);
  QueueGather(tensor);
  if (prefetching_) {
    if (position_ < sequence_.size() && sequence_[position_] == tensor) {
      ++position_;
      if (position_ < sequence_.size()) QueueGather(sequence_[position_]);
    } else {
      prefetching_ = false;  // the model asked in another order
    }
  }
  const double start = NowSeconds();
  const TensorSpec& spec = context_.layout.tensor(tensor);
  if (absl::Status s = comm_->Wait(
          gather_ticket_[tensor], context_.options.rpc_timeout,
          absl::StrCat("the all-gather of ", spec.name, " in step ", step_));
      !s.ok()) {
    Fail(std::move(s));
  } else if (device_ != nullptr) {
    // The kernels the model enqueues next read the gathered values.
    if (absl::Status d = device_->BeforeRead(tensor); !d.ok()) {
      Fail(std::move(d));
    }
  }
  hook_wait_s_ += NowSeconds() - start;
}

void Zero3Strategy::ForwardDone(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  // Backward reads it next: keep it (FSDP keeps the last unit).
  if (prefetching_ && position_ < sequence_.size() &&
      sequence_[position_] == tensor) {
    return;
  }
  ReleaseParams(tensor);
}

void Zero3Strategy::OnGradientReady(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  ReleaseParams(tensor);
  gradients_->Reduce(tensor, tensor, step_);
}

absl::StatusOr<StepStats> Zero3Strategy::FinishStep(int64_t step) {
  if (comm_ == nullptr) {
    return absl::FailedPreconditionError("zero3: FinishStep before Init");
  }
  RS_RETURN_IF_ERROR(error_);
  RS_RETURN_IF_ERROR(comm_->WaitAll(
      context_.options.rpc_timeout,
      absl::StrCat("the gradients' reduce-scatters of step ", step)));
  RS_ASSIGN_OR_RETURN(StepStats stats, sharded_.optimizer->Step(step));
  RS_RETURN_IF_ERROR(sharded_.optimizer->MaybeCheckpoint(step));
  stats.hook_wait_s = hook_wait_s_;
  int64_t reduced_critical = 0;
  stats.bytes_sent = stats.bytes_received =
      gathered_bytes_ + gradients_->TakeStepBytes(&reduced_critical);
  stats.ring_critical_bytes = gathered_critical_bytes_ + reduced_critical;
  hook_wait_s_ = 0;
  gathered_bytes_ = gathered_critical_bytes_ = 0;
  // Every tensor's parameters are freed by now, except any the model never
  // released (read in forward only and never reported ready: none in a
  // model that keeps the contract); free them so the next step gathers the
  // updated values.
  for (int t = 0; t < context_.layout.num_tensors(); ++t) ReleaseParams(t);
  RS_RETURN_IF_ERROR(error_);
  recorded_ = recorded_ || !sequence_.empty();
  position_ = 0;
  prefetching_ = recorded_;
  step_ = step + 1;
  return stats;
}

absl::Status Zero3Strategy::GatherWholeBuffer(const std::string& what) {
  // CUDA: after every kernel enqueued so far that reads the parameters.
  for (int t = 0; device_ != nullptr && t < context_.layout.num_tensors();
       ++t) {
    RS_RETURN_IF_ERROR(device_->Released(t));
  }
  const int64_t ticket = comm_->Enqueue([this, what]() {
    for (int t = 0; device_ != nullptr && t < context_.layout.num_tensors();
         ++t) {
      RS_RETURN_IF_ERROR(
          device_->BeforeGather(t, context_.options.rpc_timeout));
    }
    return sharded_.optimizer->GatherParams(absl::StrCat("all-gather of ", what))
        .status();
  });
  return comm_->Wait(ticket, context_.options.rpc_timeout,
                     absl::StrCat("the all-gather of ", what));
}

absl::Status Zero3Strategy::PrepareEvaluation() {
  if (comm_ == nullptr) {
    return absl::FailedPreconditionError("zero3: evaluation before Init");
  }
  RS_RETURN_IF_ERROR(error_);
  return GatherWholeBuffer(
      absl::StrCat("the parameters to evaluate before step ", step_));
}

absl::Status Zero3Strategy::EndEvaluation() {
  for (int t = 0; t < context_.layout.num_tensors(); ++t) {
    RS_RETURN_IF_ERROR(GiveBack(t));
  }
  return absl::OkStatus();
}

absl::Status Zero3Strategy::Shutdown() {
  if (comm_ == nullptr) return absl::OkStatus();
  // Every rank ends with the whole, identical buffer.
  absl::Status s = GatherWholeBuffer("the final parameters");
  comm_->Stop();
  comm_.reset();
  return s;
}

RINGSIDE_REGISTER_STRATEGY(
    Zero3Strategy,
    StrategyInfo("zero3", ServerNeed::kNone)
        .Store()
        .Describe("ZeRO stage 3 / FSDP: each rank keeps its piece of every "
                  "tensor (cut evenly across the ranks, FSDP's FULL_SHARD; "
                  "--zero_layout=contiguous: byte-balanced shards of the "
                  "whole buffer) of the parameters, gradients and optimizer "
                  "state; "
                  "all-gathers each tensor before the model reads it "
                  "(prefetching the next) and frees it after, "
                  "reduce-scatters each gradient as backward makes it "
                  "(Gloo on CPU, NCCL on CUDA; charlm as one unit; on CUDA "
                  "workers the device buffers stay whole-size: the memory "
                  "saving is counted, not realised)")
        .Display("ZeRO-3")
        .StudyOrder(10)
        .ModelledAs("zero3")
        .Options({"zero_layout", "gloo_event_loop", "checkpoint_every",
                  "resume"}));

}  // namespace ringside
