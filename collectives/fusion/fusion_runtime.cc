#include "collectives/fusion/fusion_runtime.h"

#include <glog/logging.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "absl/strings/str_cat.h"
#include "collectives/fusion/byte_messages.h"
#include "collectives/fusion/fusion_plan.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "proto/fusion_control.pb.h"

namespace ringside {
namespace {

// Longest a rank with nothing to reduce waits between cycles.
constexpr absl::Duration kIdleCycle = absl::Milliseconds(50);

// Flags appended to the cached-bit vector of each cycle's all-reduce.
enum Flag { kHasRequests = 0, kShutdown = 1, kStallProbe = 2, kNumFlags = 3 };

}  // namespace

absl::StatusOr<std::unique_ptr<FusionRuntime>> FusionRuntime::Start(
    Collective* control, Collective* data, const TensorLayout& layout,
    absl::Span<float> grads, FusionOptions options, FusionMemory* memory,
    Collective* overlap_data) {
  RS_RETURN_IF_ERROR(options.Validate());
  if (control == nullptr || data == nullptr) {
    return absl::InvalidArgumentError("fusion runtime needs two collectives");
  }
  if (control->size() != data->size() || control->rank() != data->rank()) {
    return absl::InvalidArgumentError(
        "fusion control and data collectives disagree on rank/size");
  }
  if (overlap_data != nullptr &&
      (overlap_data == data || overlap_data == control ||
       overlap_data->size() != data->size() ||
       overlap_data->rank() != data->rank())) {
    return absl::InvalidArgumentError(
        "the fusion overlap collective must be a distinct collective over the "
        "same ranks as the data collective");
  }
  if (static_cast<int64_t>(grads.size()) != layout.total_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gradient buffer has ", grads.size(), " floats; the layout needs ",
        layout.total_elements()));
  }
  RS_ASSIGN_OR_RETURN(
      std::vector<std::string> layouts,
      AllGatherBytes(*control, layout.ToProto().SerializeAsString(),
                     options.timeout));
  for (int r = 1; r < control->size(); ++r) {
    if (layouts[r] != layouts[0]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", r, "'s tensor layout differs from rank 0's; every worker "
          "must train the same model"));
    }
  }
  std::unique_ptr<FusionRuntime> runtime(new FusionRuntime(
      control, data, overlap_data, layout, grads, std::move(options),
      memory));
  runtime->thread_ = std::thread([r = runtime.get()] { r->Loop(); });
  return runtime;
}

FusionRuntime::FusionRuntime(Collective* control, Collective* data,
                             Collective* overlap_data,
                             const TensorLayout& layout,
                             absl::Span<float> grads, FusionOptions options,
                             FusionMemory* memory)
    : control_(control),
      data_(data),
      // Two lanes copy concurrently: only through our own host memory.
      overlap_data_(memory == nullptr ? overlap_data : nullptr),
      layout_(layout),
      grads_(grads),
      options_(std::move(options)),
      rank_(control->rank()),
      world_size_(control->size()),
      cache_(options_.cache_capacity),
      coordinator_(world_size_, &layout_),
      enqueue_s_(layout_.num_tensors(), 0.0),
      memory_(memory != nullptr ? memory : &host_memory_),
      last_probe_s_(NowSeconds()) {}

FusionRuntime::~FusionRuntime() {
  {
    absl::MutexLock lock(&mu_);
    abandon_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void FusionRuntime::Enqueue(int index) {
  const double now = NowSeconds();
  absl::MutexLock lock(&mu_);
  queue_.push_back({index, now});
}

absl::Status FusionRuntime::WaitForReduced(int count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reduced_ >= count || stopped_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "only ", reduced_, " of ", count, " tensors were all-reduced within ",
        absl::FormatDuration(timeout),
        " (a peer may be slow or gone; stalls are reported on rank 0)"));
  }
  if (!error_.ok()) return error_;
  if (reduced_ < count) {
    return absl::FailedPreconditionError("fusion runtime is shut down");
  }
  reduced_ -= count;
  return absl::OkStatus();
}

absl::Status FusionRuntime::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_requested_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  return error_;
}

FusionStats FusionRuntime::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void FusionRuntime::Loop() {
  const double cycle_s = absl::ToDoubleSeconds(options_.cycle_time);
  double next_s = NowSeconds();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      next_s = std::max(next_s + cycle_s, NowSeconds());
      auto abandoned = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return abandon_;
      };
      mu_.AwaitWithDeadline(
          absl::Condition(&abandoned),
          absl::Now() + absl::Seconds(next_s - NowSeconds()));
      // Idle (nothing queued, pending or unfinished here): no control
      // all-reduce every cycle while the model computes — each costs the
      // communication threads CPU and wake-ups the compute needs — but one
      // per kIdleCycle so that stall detection still runs, or at once when
      // a tensor arrives, then one more cycle to gather its neighbours.
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return abandon_ || shutdown_requested_ || !queue_.empty();
      };
      if (!abandon_ && pending_bits_.empty() && new_requests_.empty() &&
          not_ready_.empty() && !has_work()) {
        if (mu_.AwaitWithTimeout(absl::Condition(&has_work), kIdleCycle)) {
          next_s = NowSeconds() + cycle_s;
          mu_.AwaitWithDeadline(absl::Condition(&abandoned),
                                absl::Now() + absl::Seconds(cycle_s));
        }
      }
      if (abandon_) {
        stopped_ = true;
        return;
      }
    }
    bool stop = false;
    absl::Status s = RunCycle(&stop);
    absl::MutexLock lock(&mu_);
    stats_ = local_stats_;
    if (!s.ok()) {
      error_ = Annotate(s, "fusion runtime");
      LOG(ERROR) << "rank " << rank_ << ": " << error_;
    }
    if (!s.ok() || stop) {
      stopped_ = true;
      return;
    }
  }
}

absl::Status FusionRuntime::RunCycle(bool* stop) {
  ++local_stats_.cycles;
  std::vector<Queued> fresh;
  bool shutdown_requested;
  {
    absl::MutexLock lock(&mu_);
    fresh.swap(queue_);
    shutdown_requested = shutdown_requested_;
  }
  // Submit only what is final in memory (always, for host memory); keep
  // the rest, in order, for a later cycle.
  fresh.insert(fresh.begin(), not_ready_.begin(), not_ready_.end());
  not_ready_.clear();
  for (const Queued& q : fresh) {
    RS_ASSIGN_OR_RETURN(const bool ready, memory_->Ready(q.index));
    if (!ready) {
      not_ready_.push_back(q);
      continue;
    }
    enqueue_s_[q.index] = q.enqueue_s;
    if (std::optional<int> bit = cache_.BitOf(q.index)) {
      pending_bits_[*bit] = q.enqueue_s;
      ++local_stats_.cache_hits;
    } else {
      new_requests_.push_back(q);
      ++local_stats_.cache_misses;
    }
  }
  const double now = NowSeconds();
  const double stall_s = absl::ToDoubleSeconds(options_.stall_warning);
  bool probe = false;
  if (now - last_probe_s_ >= stall_s) {
    for (const auto& [bit, since] : pending_bits_) {
      probe = probe || now - since >= stall_s;
    }
  }

  // One all-reduce: a bit per cached tensor, then the flags. Every rank has
  // the same cache, so the same vector length.
  const int c = cache_.size();
  std::vector<float> bits(c + kNumFlags, 0.0f);
  for (const auto& [bit, since] : pending_bits_) bits[bit] = 1.0f;
  bits[c + kHasRequests] = new_requests_.empty() ? 0.0f : 1.0f;
  bits[c + kShutdown] = shutdown_requested ? 1.0f : 0.0f;
  bits[c + kStallProbe] = probe ? 1.0f : 0.0f;
  RS_RETURN_IF_ERROR(Annotate(
      control_->AllReduce(absl::MakeSpan(bits), ReduceOp::kSum,
                          options_.timeout),
      "exchanging the response-cache bit vector"));

  std::vector<int> ready;
  for (int b = 0; b < c; ++b) {
    if (bits[b] == static_cast<float>(world_size_)) {
      ready.push_back(cache_.TensorAt(b));
      pending_bits_.erase(b);
    }
  }
  std::vector<int> negotiated;
  if (bits[c + kHasRequests] > 0) {
    RS_ASSIGN_OR_RETURN(negotiated, Negotiate());
  }
  if (bits[c + kStallProbe] > 0) RS_RETURN_IF_ERROR(ProbeCachedStalls(now));
  if (rank_ == 0) {
    for (const StallReport& r : coordinator_.TakeStalled(now, stall_s)) {
      ReportStall(r);
    }
  }

  // Same order on every rank: cached (bit order) then negotiated (the
  // coordinator's order), sorted by index so neighbours fuse in place.
  ready.insert(ready.end(), negotiated.begin(), negotiated.end());
  std::sort(ready.begin(), ready.end());
  if (!ready.empty()) {
    RS_RETURN_IF_ERROR(Execute(ready, NowSeconds()));
  }
  for (int t : negotiated) cache_.Put(t);
  {
    absl::MutexLock lock(&mu_);
    reduced_ += ready.size();
  }
  *stop = bits[c + kShutdown] == static_cast<float>(world_size_);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> FusionRuntime::Negotiate() {
  ++local_stats_.negotiations;
  proto::RequestList mine;
  for (const Queued& q : new_requests_) {
    proto::TensorRequest* r = mine.add_requests();
    r->set_index(q.index);
    r->set_elements(layout_.tensor(q.index).size);
  }
  new_requests_.clear();
  RS_ASSIGN_OR_RETURN(
      std::vector<std::string> all,
      AllGatherBytes(*control_, mine.SerializeAsString(), options_.timeout));
  std::string response_bytes;
  if (rank_ == 0) {
    proto::ResponseList response;
    const double now = NowSeconds();
    for (int r = 0; r < world_size_ && response.error().empty(); ++r) {
      proto::RequestList requests;
      absl::Status s = requests.ParseFromString(all[r])
                           ? coordinator_.Add(r, requests, now)
                           : absl::InvalidArgumentError(absl::StrCat(
                                 "unparsable request list from rank ", r));
      if (!s.ok()) response.set_error(std::string(s.message()));
    }
    for (int t : coordinator_.TakeReady()) response.add_ready(t);
    response_bytes = response.SerializeAsString();
  }
  RS_RETURN_IF_ERROR(
      BroadcastBytes(*control_, &response_bytes, 0, options_.timeout));
  proto::ResponseList response;
  if (!response.ParseFromString(response_bytes)) {
    return absl::DataLossError("unparsable response from the coordinator");
  }
  if (!response.error().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("coordinator (rank 0) rejected a request: ",
                     response.error()));
  }
  std::vector<int> ready;
  for (int t : response.ready()) {
    if (t < 0 || t >= layout_.num_tensors()) {
      return absl::DataLossError(
          absl::StrCat("coordinator answered unknown tensor ", t));
    }
    ready.push_back(t);
  }
  return ready;
}

absl::Status FusionRuntime::ProbeCachedStalls(double now) {
  last_probe_s_ = now;
  proto::RequestList mine;  // this rank's pending cached tensors
  for (const auto& [bit, since] : pending_bits_) {
    proto::TensorRequest* r = mine.add_requests();
    r->set_index(cache_.TensorAt(bit));
    r->set_elements(layout_.tensor(cache_.TensorAt(bit)).size);
  }
  RS_ASSIGN_OR_RETURN(
      std::vector<std::string> all,
      AllGatherBytes(*control_, mine.SerializeAsString(), options_.timeout));
  if (rank_ != 0) return absl::OkStatus();
  Coordinator table(world_size_, &layout_);
  for (int r = 0; r < world_size_; ++r) {
    proto::RequestList requests;
    if (!requests.ParseFromString(all[r])) {
      return absl::DataLossError(
          absl::StrCat("unparsable stall probe from rank ", r));
    }
    RS_RETURN_IF_ERROR(table.Add(r, requests, now));
  }
  const double stall_s = absl::ToDoubleSeconds(options_.stall_warning);
  for (StallReport report : table.TakeStalled(now, 0.0)) {
    report.waiting_s = stall_s;  // at least; each rank timed its own
    ReportStall(report);
  }
  return absl::OkStatus();
}

void FusionRuntime::ReportStall(const StallReport& report) {
  ++local_stats_.stalls_reported;
  if (options_.on_stall) {
    options_.on_stall(report);
  } else {
    LOG(WARNING) << "fusion stall: " << report.ToString();
  }
}

absl::Status FusionRuntime::Execute(const std::vector<int>& ready,
                                    double decided_s) {
  for (int t : ready) {
    RecordSpan(options_.timeline, layout_.tensor(t).name, "NEGOTIATE",
               enqueue_s_[t], decided_s);
  }
  const std::vector<FusedBatch> batches =
      PlanFusion(layout_, ready, options_.fusion_threshold_bytes,
                 options_.in_place_contiguous);
  // Lane l gets batches l, l + lanes, ...; each its own part of the buffer.
  const int lanes = overlap_data_ != nullptr && batches.size() >= 2 ? 2 : 1;
  std::vector<std::vector<FusedBatch>> lane_batches(lanes);
  std::vector<int64_t> lane_buffer(lanes, 0);
  for (size_t b = 0; b < batches.size(); ++b) {
    lane_batches[b % lanes].push_back(batches[b]);
    if (!batches[b].in_place) {
      lane_buffer[b % lanes] =
          std::max(lane_buffer[b % lanes], batches[b].elements);
    }
  }
  // Sized once, before the lanes run: Buffer is not thread-safe.
  absl::Span<float> buffer;
  if (const int64_t floats =
          std::accumulate(lane_buffer.begin(), lane_buffer.end(), int64_t{0});
      floats > 0) {
    RS_ASSIGN_OR_RETURN(buffer, memory_->Buffer(floats));
  }
  if (lanes == 1) {
    return RunLane(lane_batches[0], data_, buffer, decided_s, &local_stats_);
  }
  FusionStats second_stats;
  absl::Status second;
  std::thread second_lane([&] {
    second = RunLane(lane_batches[1], overlap_data_,
                     buffer.subspan(lane_buffer[0], lane_buffer[1]),
                     decided_s, &second_stats);
  });
  absl::Status first = RunLane(lane_batches[0], data_,
                               buffer.subspan(0, lane_buffer[0]), decided_s,
                               &local_stats_);
  second_lane.join();
  local_stats_.batches += second_stats.batches;
  local_stats_.second_lane_batches += second_stats.batches;
  local_stats_.in_place_batches += second_stats.in_place_batches;
  local_stats_.bytes_copied += second_stats.bytes_copied;
  RS_RETURN_IF_ERROR(first);
  return second;
}

absl::Status FusionRuntime::RunLane(const std::vector<FusedBatch>& batches,
                                    Collective* data,
                                    absl::Span<float> buffer,
                                    double decided_s, FusionStats* stats) {
  Timeline* timeline = options_.timeline;
  for (const FusedBatch& batch : batches) {
    ++stats->batches;
    const double start = NowSeconds();
    const nlohmann::json args = {{"batch_tensors", batch.tensors.size()},
                                 {"batch_bytes", batch.elements * 4},
                                 {"in_place", batch.in_place}};
    for (int t : batch.tensors) {
      RecordSpan(timeline, layout_.tensor(t).name, "QUEUE", decided_s, start);
    }
    absl::Span<float> target;
    if (batch.in_place) {
      ++stats->in_place_batches;
      target = grads_.subspan(batch.offset, batch.elements);
    } else {
      target = buffer.subspan(0, batch.elements);
      int64_t at = 0;
      for (int t : batch.tensors) {
        const double copy_start = NowSeconds();
        absl::Span<const float> view = layout_.View(t, grads_);
        RS_RETURN_IF_ERROR(Annotate(
            memory_->Copy(target.data() + at, view.data(), view.size()),
            "copying into the fusion buffer"));
        at += view.size();
        RecordSpan(timeline, layout_.tensor(t).name, "MEMCPY_IN_FUSION_BUFFER",
                   copy_start, NowSeconds());
      }
      stats->bytes_copied += 2 * batch.elements * 4;
    }
    const double reduce_start = NowSeconds();
    absl::Status s =
        data->AllReduce(target, ReduceOp::kAverage, options_.timeout);
    const double reduce_end = NowSeconds();
    if (!s.ok()) {
      return Annotate(s, absl::StrCat("all-reduce of a fused batch of ",
                                      batch.tensors.size(), " tensors from '",
                                      layout_.tensor(batch.tensors[0]).name,
                                      "'"));
    }
    for (int t : batch.tensors) {
      RecordSpan(timeline, layout_.tensor(t).name, "ALLREDUCE", reduce_start,
                 reduce_end, args);
    }
    if (!batch.in_place) {
      int64_t at = 0;
      for (int t : batch.tensors) {
        const double copy_start = NowSeconds();
        absl::Span<float> view = layout_.View(t, grads_);
        RS_RETURN_IF_ERROR(Annotate(
            memory_->Copy(view.data(), target.data() + at, view.size()),
            "copying out of the fusion buffer"));
        at += view.size();
        RecordSpan(timeline, layout_.tensor(t).name, "MEMCPY_OUT", copy_start,
                   NowSeconds());
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ringside
