#include "worker/strategies/ps/async_ps_strategy.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "worker/strategies/ps/async_ps_options.h"

namespace ringside {

AsyncPsStrategy::~AsyncPsStrategy() { StopThread(); }

absl::Status AsyncPsStrategy::Init(const SyncContext& context) {
  RS_RETURN_IF_ERROR(context.options.Validate());
  context_ = context;
  staleness_ = context.options.strategy.Get<AsyncPsOptions>().staleness;
  comm_params_.assign(context.params.begin(), context.params.end());
  // The session pulls version 0 into comm_params_; each round hands it the
  // round's own buffers (CommLoop), so it never reads the trainer's grads.
  SyncContext comm = context;
  comm.params = absl::MakeSpan(comm_params_);
  RS_ASSIGN_OR_RETURN(session_, PsSession::Start(comm, /*overlap=*/false));
  // Version 0 (rank 0's initial parameters) is in comm_params_.
  std::copy(comm_params_.begin(), comm_params_.end(), context.params.begin());
  have_version_ = 0;
  {
    absl::MutexLock lock(&mu_);
    latest_ = comm_params_;
    latest_version_ = 0;
  }
  comm_thread_ = std::thread([this] { CommLoop(); });
  return absl::OkStatus();
}

void AsyncPsStrategy::CommLoop() {
  while (true) {
    Pending item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !pending_.empty() || stop_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      item = std::move(pending_.front());
      pending_.pop_front();
    }
    // The round pushes the queued gradient where it lies and pulls into
    // comm_params_, which then trades places with latest_: no copy of the
    // whole buffer between rounds (two 14 MB copies, one of them holding
    // mu_, delayed each round by 8-44 ms with 4 workers on 2 cores).
    // Version item.step arrived before this push (the previous iteration
    // pulled it), so every shard accepts step item.step now.
    absl::StatusOr<StepStats> stats;
    if (absl::Status handed = session_->UseBuffers(absl::MakeSpan(comm_params_),
                                                   absl::MakeSpan(item.grads));
        handed.ok()) {
      stats = session_->FinishStep(item.step);
    } else {
      stats = handed;
    }
    absl::MutexLock lock(&mu_);
    free_.push_back(std::move(item.grads));
    if (!stats.ok()) {
      error_ = Annotate(stats.status(),
                        absl::StrCat("async_ps: push of step ", item.step,
                                     " / pull of version ", item.step + 1));
      return;
    }
    latest_.swap(comm_params_);
    latest_version_ = item.step + 1;
    traffic_.bytes_sent += stats->bytes_sent;
    traffic_.bytes_received += stats->bytes_received;
  }
}

absl::Status AsyncPsStrategy::WaitForVersion(int64_t version,
                                             absl::Duration timeout,
                                             const char* what) {
  absl::MutexLock lock(&mu_);
  auto arrived = [this, version]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return latest_version_ >= version || !error_.ok();
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&arrived), timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "async_ps ", what, ": parameter version ", version,
        " did not arrive within ", absl::FormatDuration(timeout),
        " (newest: ", latest_version_, ", staleness ", staleness_, ")"));
  }
  return error_;
}

void AsyncPsStrategy::InstallLatest() {
  absl::MutexLock lock(&mu_);
  if (latest_version_ <= have_version_) return;
  std::copy(latest_.begin(), latest_.end(), context_.params.begin());
  have_version_ = latest_version_;
}

absl::StatusOr<StepStats> AsyncPsStrategy::FinishStep(int64_t step) {
  if (step != static_cast<int64_t>(versions_used_.size())) {
    return absl::InternalError(absl::StrCat("async_ps: FinishStep(", step,
                                            ") after ", versions_used_.size(),
                                            " steps"));
  }
  versions_used_.push_back(have_version_);
  // Hand the gradient to the background thread (a recycled buffer).
  std::vector<float> buffer;
  {
    absl::MutexLock lock(&mu_);
    if (!error_.ok()) return error_;
    if (!free_.empty()) {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
  }
  buffer.assign(context_.grads.begin(), context_.grads.end());
  {
    absl::MutexLock lock(&mu_);
    pending_.push_back({step, std::move(buffer)});
  }
  // Step step+1 may use any version >= step+1-tau.
  const double start = context_.options.timeline ? NowSeconds() : 0.0;
  const absl::Duration timeout =
      context_.options.rpc_timeout * (staleness_ + 2);
  RS_RETURN_IF_ERROR(
      WaitForVersion(step + 1 - staleness_, timeout, "FinishStep"));
  InstallLatest();
  if (context_.options.timeline != nullptr) {
    context_.options.timeline->Span("step", "WAIT_PARAMS", start, NowSeconds(),
                                    {{"step", step},
                                     {"version", have_version_},
                                     {"staleness", step + 1 - have_version_}});
  }
  StepStats stats;
  absl::MutexLock lock(&mu_);
  stats.bytes_sent = traffic_.bytes_sent;
  stats.bytes_received = traffic_.bytes_received;
  traffic_ = StepStats();
  return stats;
}

void AsyncPsStrategy::StopThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (comm_thread_.joinable()) comm_thread_.join();
}

std::string AsyncPsStrategy::Variant() const {
  return absl::StrCat("τ=", staleness_);
}

absl::Status AsyncPsStrategy::Quiesce(int64_t step) {
  if (session_ == nullptr) return absl::OkStatus();
  const double start = context_.options.timeline ? NowSeconds() : 0.0;
  RS_RETURN_IF_ERROR(WaitForVersion(
      step + 1, context_.options.rpc_timeout * (staleness_ + 2), "Quiesce"));
  if (context_.options.timeline != nullptr) {
    context_.options.timeline->Span("step", "DRAIN", start, NowSeconds(),
                                    {{"step", step}});
  }
  return absl::OkStatus();
}

absl::Status AsyncPsStrategy::Abort() {
  StopThread();
  if (session_ != nullptr) session_->Abort();
  return absl::OkStatus();
}

absl::Status AsyncPsStrategy::Shutdown() {
  if (session_ == nullptr) return absl::OkStatus();
  // Drain: every step pushed, the final version (all updates) installed.
  const int64_t steps = static_cast<int64_t>(versions_used_.size());
  absl::Status drained = WaitForVersion(
      steps, context_.options.rpc_timeout * (staleness_ + 2), "Shutdown");
  if (drained.ok()) InstallLatest();
  StopThread();
  RS_RETURN_IF_ERROR(drained);
  int64_t max_lag = 0;
  double sum_lag = 0;
  for (int64_t t = 0; t < steps; ++t) {
    max_lag = std::max(max_lag, t - versions_used_[t]);
    sum_lag += static_cast<double>(t - versions_used_[t]);
  }
  LOG(INFO) << "async_ps rank " << context_.rank << ": staleness bound "
            << staleness_ << ", gradients computed on parameters "
            << (steps > 0 ? sum_lag / steps : 0.0)
            << " versions old on average (max " << max_lag << ")";
  return session_->Shutdown();
}

nlohmann::json AsyncPsStrategy::RecordFields() const {
  nlohmann::json fields = session_ == nullptr ? nlohmann::json::object()
                                              : session_->RecordFields();
  fields["staleness"] = staleness_;
  return fields;
}

RINGSIDE_REGISTER_STRATEGY(
    AsyncPsStrategy,
    StrategyInfo("async_ps", ServerNeed::kSharded)
        .Describe("stale synchronous parallel on K parameter servers: a "
                  "worker at step t computes with parameters of version >= "
                  "t - tau (--staleness)")
        .Display("Async PS")
        .StudyOrder(5)
        .ModelledAs("async_ps")
        .Options({"staleness", "chunk_kb", "ps_transport"})
        .StudyFlags({"--staleness=2"})
        .VariantStates({"staleness"}));

}  // namespace ringside
