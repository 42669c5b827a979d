#include "common/liveness_monitor.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace ringside {

std::string LostPeer::Describe(absl::string_view self,
                               int64_t self_step) const {
  std::string detail;
  if (last_step >= 0) detail = absl::StrCat("last seen at step ", last_step);
  if (!self.empty() && self_step >= 0) {
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", self, " at step ",
                    self_step);
  }
  return absl::StrCat(
      name, " lost: no heartbeat for ",
      absl::StrFormat("%.1f", absl::ToDoubleSeconds(silent)), " s",
      detail.empty() ? "" : absl::StrCat(" (", detail, ")"));
}

PeerTracker::PeerTracker(absl::Duration failure_timeout)
    : failure_timeout_(failure_timeout) {}

void PeerTracker::Track(int id, std::string name, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (peers_.count(id) != 0) return;
  Peer& p = peers_[id];
  p.name = std::move(name);
  p.last_seen = now;
}

void PeerTracker::Seen(int id, absl::Time now, int64_t step) {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(id);
  if (it == peers_.end() || it->second.forgotten) return;
  it->second.last_seen = std::max(it->second.last_seen, now);
  if (step >= 0) it->second.last_step = step;
}

void PeerTracker::Excuse(int except, absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (auto& [id, peer] : peers_) {
    if (id == except || peer.forgotten) continue;
    if (now - peer.last_seen <= failure_timeout_) {
      peer.last_seen = std::max(peer.last_seen, now);
    }
  }
}

void PeerTracker::Forget(int id) {
  absl::MutexLock lock(&mu_);
  peers_[id].forgotten = true;
}

bool PeerTracker::tracked(int id) const {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(id);
  return it != peers_.end() && !it->second.forgotten;
}

int PeerTracker::num_tracked() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& entry : peers_) n += entry.second.forgotten ? 0 : 1;
  return n;
}

std::optional<LostPeer> PeerTracker::FindLost(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  const std::pair<const int, Peer>* worst = nullptr;
  for (const auto& entry : peers_) {
    if (entry.second.forgotten) continue;
    if (worst == nullptr || entry.second.last_seen < worst->second.last_seen) {
      worst = &entry;
    }
  }
  if (worst == nullptr || now - worst->second.last_seen <= failure_timeout_) {
    return std::nullopt;
  }
  LostPeer lost;
  lost.id = worst->first;
  lost.name = worst->second.name;
  lost.silent = now - worst->second.last_seen;
  lost.last_step = worst->second.last_step;
  return lost;
}

absl::Status LivenessOptions::Validate() const {
  if (failure_timeout <= absl::ZeroDuration() ||
      failure_timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failure timeout must be positive and finite, got ",
                     absl::FormatDuration(failure_timeout)));
  }
  if (period < absl::ZeroDuration() || period > failure_timeout) {
    return absl::InvalidArgumentError(absl::StrCat(
        "heartbeat period must be in [0, failure timeout], got ",
        absl::FormatDuration(period)));
  }
  if (exit_after_verdict < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("exit_after_verdict must be >= 0");
  }
  return absl::OkStatus();
}

absl::Duration LivenessOptions::EffectivePeriod() const {
  return period > absl::ZeroDuration() ? period : failure_timeout / 6;
}

absl::StatusOr<std::unique_ptr<LivenessMonitor>> LivenessMonitor::Start(
    LivenessOptions options, std::unique_ptr<HeartbeatSource> source) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  std::unique_ptr<LivenessMonitor> monitor(
      new LivenessMonitor(std::move(options), std::move(source)));
  monitor->thread_ = std::thread([m = monitor.get()] { m->Loop(); });
  return monitor;
}

LivenessMonitor::LivenessMonitor(LivenessOptions options,
                                 std::unique_ptr<HeartbeatSource> source)
    : options_(std::move(options)),
      period_(options_.EffectivePeriod()),
      source_(std::move(source)),
      tracker_(options_.failure_timeout) {}

LivenessMonitor::~LivenessMonitor() { Stop(); }

absl::Time LivenessMonitor::Now() const {
  return options_.now ? options_.now() : absl::Now();
}

void LivenessMonitor::Loop() {
  while (true) {
    const absl::Time start = absl::Now();
    absl::Status beat;
    {
      absl::MutexLock source_lock(&source_mu_);
      {
        absl::MutexLock lock(&mu_);
        if (stop_ || finished_) return;
      }
      if (source_ != nullptr) beat = source_->Beat(step(), Now(), tracker_);
    }
    std::optional<std::string> verdict;
    if (!beat.ok()) {
      verdict = std::string(beat.message());
    } else if (std::optional<LostPeer> lost = tracker_.FindLost(Now())) {
      verdict = lost->Describe(options_.self, step());
    }
    absl::MutexLock lock(&mu_);
    if (stop_ || finished_) return;
    if (verdict.has_value()) {
      verdict_ = verdict;
      mu_.Unlock();
      Deliver(*verdict);
      mu_.Lock();
      if (options_.exit_after_verdict == absl::InfiniteDuration()) return;
      auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_;
      };
      if (!mu_.AwaitWithTimeout(absl::Condition(&stopped),
                                options_.exit_after_verdict)) {
        LOG(ERROR) << "liveness: still running "
                   << absl::FormatDuration(options_.exit_after_verdict)
                   << " after the verdict; exiting with code "
                   << options_.exit_code;
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(options_.exit_code);
      }
      return;
    }
    auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_ || finished_;
    };
    mu_.AwaitWithDeadline(absl::Condition(&woken), start + period_);
  }
}

void LivenessMonitor::Deliver(const std::string& verdict) {
  if (options_.on_verdict) {
    options_.on_verdict(verdict);
  } else {
    LOG(ERROR) << verdict;
  }
}

void LivenessMonitor::Finish() {
  {
    absl::MutexLock lock(&mu_);
    if (finished_ || stop_ || verdict_.has_value()) return;
    finished_ = true;
  }
  absl::MutexLock source_lock(&source_mu_);
  if (source_ != nullptr) source_->Finish(step());
}

std::optional<std::string> LivenessMonitor::AwaitVerdict(
    absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto decided = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return verdict_.has_value() || stop_ || finished_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&decided), timeout);
  return verdict_;
}

void LivenessMonitor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace ringside
