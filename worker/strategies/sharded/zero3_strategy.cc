#include "worker/strategies/sharded/zero3_strategy.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "device/cuda_stream.h"
#include "device/mapped_device_buffer.h"
#include "worker/strategies/allreduce/gradient_buckets.h"
#include "worker/strategies/sharded/zero_options.h"

namespace ringside {

Zero3Strategy::Zero3Strategy() {
  hooks_.needed = [this](int tensor) { Needed(tensor); };
  hooks_.forward_done = [this](int tensor) { ForwardDone(tensor); };
  hooks_.writes_gradient = [this](int tensor) { WritesGradient(tensor); };
}

Zero3Strategy::~Zero3Strategy() {
  if (comm_ != nullptr) comm_->Stop();
}

absl::Status Zero3Strategy::Init(const SyncContext& context) {
  context_ = context;
  const ZeroOptions& options = context_.options.strategy.Get<ZeroOptions>();
  // FSDP's units: adjacent tensors up to --zero3_unit_kb (one tensor each
  // at 0), as ring's buckets group them.
  units_ = AssignBuckets(context_.layout, options.zero3_unit_bytes,
                         options.zero3_unit_bytes);
  unit_of_.assign(context_.layout.num_tensors(), 0);
  std::vector<KeyRange> ranges;
  for (size_t u = 0; u < units_.size(); ++u) {
    for (int t = units_[u].first_tensor; t <= units_[u].last_tensor; ++t) {
      unit_of_[t] = static_cast<int>(u);
    }
    ranges.push_back(UnitRange(static_cast<int>(u)));
  }
  RS_ASSIGN_OR_RETURN(ShardPlan plan,
                      ZeroShardPlan(context_.layout, std::move(ranges),
                                    context_.world_size, options.per_unit()));
  RS_ASSIGN_OR_RETURN(sharded_,
                      StartSharded(context_, name(), std::move(plan)));
  step_ = sharded_.start_step;
  shards_ = &sharded_.optimizer->shards();
  for (size_t u = 0; u < units_.size(); ++u) {
    unit_counts_.push_back(
        shards_->CountsWithin(UnitRange(static_cast<int>(u))));
  }
  gather_ticket_.assign(units_.size(), -1);
  grads_held_.assign(units_.size(), false);
  forward_done_.assign(units_.size(), 0);
  grads_ready_.assign(units_.size(), 0);
  forward_closed_.assign(units_.size(), false);
  if (context_.device == Device::kCuda) {
    RS_ASSIGN_OR_RETURN(device_, Zero3DeviceOrder::Create(context_));
  }
  // From here on this rank holds its pieces of the parameters only (and of
  // the gradients: ShardedGradients), logically on a device.
  for (size_t u = 0; u < units_.size(); ++u) {
    RS_RETURN_IF_ERROR(GiveBack(static_cast<int>(u)));
  }
  RS_RETURN_IF_ERROR(KeepOnlyPieces());
  param_bytes_ = shards_->owned_elements() * 4;
  peak_param_bytes_ = param_bytes_;
  comm_ = std::make_unique<SequencedCommThread>();
  gradients_ = std::make_unique<ShardedGradients>(
      context_, *sharded_.collective, *shards_, *comm_, /*logical=*/true,
      context_.grad_pages);
  return absl::OkStatus();
}

absl::Status Zero3Strategy::KeepOnlyPieces() {
  if (context_.param_pages == nullptr || context_.grad_pages == nullptr) {
    return absl::OkStatus();
  }
  // The backend's filling of the buffers is done before the pages go.
  if (context_.device == Device::kCuda) {
    RS_RETURN_IF_ERROR(SynchronizeStream(context_.compute_stream));
  }
  const size_t whole = context_.params.size();
  for (MappedDeviceBuffer* pages :
       {context_.param_pages, context_.grad_pages}) {
    for (const KeyRange& piece : shards_->pieces()) {
      RS_RETURN_IF_ERROR(pages->Hold(piece.begin, piece.end));
    }
    RS_RETURN_IF_ERROR(Annotate(pages->Drop(0, whole, /*after=*/nullptr),
                                "giving back the pages outside this rank's "
                                "pieces"));
    pages->ResetPeak();
  }
  return absl::OkStatus();
}

std::string Zero3Strategy::UnitInStep(int unit) const {
  return absl::StrCat(context_.layout.tensor(units_[unit].first_tensor).name,
                      "'s unit in step ", step_);
}

absl::Status Zero3Strategy::HoldUnitPages(MappedDeviceBuffer* pages,
                                          int unit, const char* what) {
  if (pages == nullptr) return absl::OkStatus();
  const KeyRange range = UnitRange(unit);
  return Annotate(pages->Hold(range.begin, range.end),
                  absl::StrCat("mapping the ", what, " of ", UnitInStep(unit)));
}

absl::Status Zero3Strategy::DropUnitPages(MappedDeviceBuffer* pages,
                                          int unit, const char* what) {
  if (pages == nullptr) return absl::OkStatus();
  const KeyRange range = UnitRange(unit);
  return Annotate(pages->Drop(range.begin, range.end, context_.compute_stream),
                  absl::StrCat("giving back the ", what, " of ",
                               UnitInStep(unit)));
}

KeyRange Zero3Strategy::UnitRange(int unit) const {
  return KeyRange{units_[unit].offset, units_[unit].offset + units_[unit].size};
}

absl::Status Zero3Strategy::GiveBack(int unit) {
  if (device_ != nullptr) {
    for (int t = units_[unit].first_tensor; t <= units_[unit].last_tensor;
         ++t) {
      RS_RETURN_IF_ERROR(device_->Released(t));
    }
    return absl::OkStatus();
  }
  shards_->Release(context_.params, UnitRange(unit));
  return absl::OkStatus();
}

void Zero3Strategy::Fail(absl::Status error) {
  if (error_.ok()) error_ = std::move(error);
}

void Zero3Strategy::NoteParams(int64_t delta) {
  param_bytes_ += delta;
  peak_param_bytes_ = std::max(peak_param_bytes_, param_bytes_);
}

void Zero3Strategy::QueueGather(int unit) {
  if (gather_ticket_[unit] >= 0) return;  // here or on its way
  // CUDA, page by page: the gather writes into mapped pages.
  if (absl::Status s = HoldUnitPages(context_.param_pages, unit, "parameters");
      !s.ok()) {
    Fail(std::move(s));
    return;
  }
  const KeyRange range = UnitRange(unit);
  NoteParams(shards_->OutsideBytes(range));
  gathered_bytes_ += ShardedPhaseBytes(range.size() * 4, context_.world_size);
  gathered_critical_bytes_ += PipelinedRingCriticalBytes(
      unit_counts_[unit], RingPieceFloats(unit_counts_[unit]));
  const int64_t step = step_;
  gather_ticket_[unit] = comm_->Enqueue([this, unit, range, step]() {
    const GradientBucket& u = units_[unit];
    // CUDA: the kernels that read the region's old contents are done.
    for (int t = u.first_tensor; device_ != nullptr && t <= u.last_tensor;
         ++t) {
      RS_RETURN_IF_ERROR(
          device_->BeforeGather(t, context_.options.rpc_timeout));
    }
    const double start = NowSeconds();
    const std::string& first = context_.layout.tensor(u.first_tensor).name;
    RS_RETURN_IF_ERROR(Annotate(
        sharded_.collective->AllGatherV(
            context_.params.subspan(range.begin, range.size()),
            unit_counts_[unit], context_.options.rpc_timeout),
        absl::StrCat("all-gather of the parameters of ", first,
                     u.num_tensors() > 1
                         ? absl::StrCat(" and the ", u.num_tensors() - 1,
                                        " tensors after it")
                         : std::string(),
                     " in step ", step)));
    const double end = NowSeconds();
    for (int t = u.first_tensor; t <= u.last_tensor; ++t) {
      if (device_ != nullptr) RS_RETURN_IF_ERROR(device_->AfterGather(t));
      const TensorSpec& spec = context_.layout.tensor(t);
      RecordSpan(context_.options.timeline, spec.name, "ALLGATHER", start, end,
                 {{"step", step}, {"bytes", spec.size * 4}});
    }
    return absl::OkStatus();
  });
}

void Zero3Strategy::ReleaseParams(int unit) {
  const int64_t ticket = gather_ticket_[unit];
  if (ticket < 0) return;
  // A gather still on its way must land before its pages go.
  if (absl::Status s = comm_->Wait(ticket, context_.options.rpc_timeout,
                                   "a parameter all-gather");
      !s.ok()) {
    Fail(std::move(s));
    return;
  }
  gather_ticket_[unit] = -1;
  NoteParams(-shards_->OutsideBytes(UnitRange(unit)));
  if (absl::Status s = GiveBack(unit); !s.ok()) Fail(std::move(s));
  // Unmapped once the kernels enqueued so far are done.
  if (absl::Status s = DropUnitPages(context_.param_pages, unit, "parameters");
      !s.ok()) {
    Fail(std::move(s));
  }
}

void Zero3Strategy::Needed(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  const int unit = unit_of_[tensor];
  // A new visit of the unit: another unit than the last one asked for, or
  // the same one again after its forward ended (backward begins with it).
  const bool visit = unit != last_unit_ || forward_closed_[unit];
  last_unit_ = unit;
  forward_closed_[unit] = false;
  if (visit && !recorded_) sequence_.push_back(unit);
  QueueGather(unit);
  if (!error_.ok()) return;  // its pages could not be mapped
  if (visit && prefetching_) {
    if (position_ < sequence_.size() && sequence_[position_] == unit) {
      ++position_;
      if (position_ < sequence_.size()) QueueGather(sequence_[position_]);
    } else {
      prefetching_ = false;  // the model asked in another order
    }
  }
  const double start = NowSeconds();
  const TensorSpec& spec = context_.layout.tensor(tensor);
  if (absl::Status s = comm_->Wait(
          gather_ticket_[unit], context_.options.rpc_timeout,
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
  const int unit = unit_of_[tensor];
  if (++forward_done_[unit] < units_[unit].num_tensors()) return;
  forward_done_[unit] = 0;
  forward_closed_[unit] = true;
  // Backward reads it next: keep it (FSDP keeps the last unit).
  if (prefetching_ && position_ < sequence_.size() &&
      sequence_[position_] == unit) {
    return;
  }
  ReleaseParams(unit);
}

void Zero3Strategy::WritesGradient(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  const int unit = unit_of_[tensor];
  if (grads_held_[unit]) return;
  grads_held_[unit] = true;
  // The reduce-scatter drops this hold (ShardedGradients).
  if (absl::Status s = HoldUnitPages(context_.grad_pages, unit, "gradients");
      !s.ok()) {
    Fail(std::move(s));
  }
}

void Zero3Strategy::OnGradientReady(int tensor) {
  if (!error_.ok() || comm_ == nullptr) return;
  const int unit = unit_of_[tensor];
  if (++grads_ready_[unit] < units_[unit].num_tensors()) return;
  grads_ready_[unit] = 0;
  if (context_.grad_pages != nullptr && !grads_held_[unit]) {
    Fail(absl::FailedPreconditionError(absl::StrCat(
        "zero3: the model reported the gradients of ", UnitInStep(unit),
        " ready without writes_gradient before writing them "
        "(models/cuda/cuda_model.h)")));
    return;
  }
  grads_held_[unit] = false;
  ReleaseParams(unit);
  gradients_->Reduce(units_[unit].first_tensor, units_[unit].last_tensor,
                     step_);
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
  // Every unit's parameters are freed by now, except any the model never
  // released (read in forward only and never reported ready: none in a
  // model that keeps the contract); free them so the next step gathers the
  // updated values.
  for (size_t u = 0; u < units_.size(); ++u) {
    ReleaseParams(static_cast<int>(u));
  }
  RS_RETURN_IF_ERROR(error_);
  std::fill(forward_done_.begin(), forward_done_.end(), 0);
  std::fill(grads_ready_.begin(), grads_ready_.end(), 0);
  std::fill(forward_closed_.begin(), forward_closed_.end(), false);
  last_unit_ = -1;
  recorded_ = recorded_ || !sequence_.empty();
  position_ = 0;
  prefetching_ = recorded_;
  step_ = step + 1;
  return stats;
}

absl::Status Zero3Strategy::GatherWholeBuffer(const std::string& what) {
  if (context_.param_pages != nullptr && !whole_held_) {
    RS_RETURN_IF_ERROR(Annotate(
        context_.param_pages->Hold(0, context_.params.size()),
        absl::StrCat("mapping the whole parameter buffer for ", what)));
    whole_held_ = true;
  }
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
  for (size_t u = 0; u < units_.size(); ++u) {
    RS_RETURN_IF_ERROR(GiveBack(static_cast<int>(u)));
  }
  if (context_.param_pages != nullptr && whole_held_) {
    whole_held_ = false;
    // Unmapped once the evaluation's kernels are done.
    return Annotate(context_.param_pages->Drop(0, context_.params.size(),
                                               context_.compute_stream),
                    "giving back the parameters after an evaluation");
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
        .Describe("ZeRO stage 3 / FSDP: units of adjacent tensors "
                  "(--zero3_unit_kb), each cut evenly across the ranks "
                  "(FSDP's FULL_SHARD; --zero_layout=contiguous: "
                  "byte-balanced shards of the whole buffer); each rank "
                  "keeps its pieces of the parameters, gradients and "
                  "optimizer state; "
                  "all-gathers a unit before the model reads it "
                  "(prefetching the next) and frees it after, "
                  "reduce-scatters a unit's gradients as backward makes them "
                  "(Gloo on CPU, NCCL on CUDA; charlm as one unit; on CUDA "
                  "workers the buffers are mapped page by page and the "
                  "pages outside the shard given back)")
        .Display("ZeRO-3")
        .StudyOrder(10)
        .ModelledAs("zero3")
        .Options({"zero_layout", "zero3_unit_kb", "gloo_event_loop",
                  "checkpoint_every", "resume"}));

}  // namespace ringside
