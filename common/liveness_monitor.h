// Failure detection by heartbeats: PeerTracker (who was heard from when)
// and LivenessMonitor (the background loop that sends this process's
// heartbeats and passes a verdict once a peer has been silent too long).
//
// PeerTracker remembers, for each tracked peer (a worker rank, a parameter
// server, the job's store), when it was last heard from and at which step.
// FindLost names the peer silent the longest once that silence exceeds the
// failure timeout. It reads no clock: callers pass `now`, so tests drive it
// with a fake clock. Thread-safe.
//
// LivenessMonitor runs the detection loop on one background thread: every
// `period` it asks its HeartbeatSource to send this process's heartbeat and
// record what it observed about the peers, then asks the tracker for a lost
// peer. The first verdict (a lost peer, or an error the source reports, such
// as a server saying the job failed) is final: it is handed to on_verdict
// once, AwaitVerdict returns it, and the loop stops. With a finite
// `exit_after_verdict` the monitor then ends the process with _exit() unless
// Stop() comes first: a thread stuck in a collective (Gloo cannot be
// interrupted) or an RPC must not keep a failed job alive. Finish() says
// this process is done (no verdict after it). Thread-safe.
#ifndef RINGSIDE_COMMON_LIVENESS_MONITOR_H_
#define RINGSIDE_COMMON_LIVENESS_MONITOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ringside {

// A peer found silent for longer than the failure timeout.
struct LostPeer {
  int id = 0;
  std::string name;      // e.g. "worker rank 3", "rank 2"
  absl::Duration silent;  // since it was last heard from
  int64_t last_step = -1;  // the step it reported last; -1: none

  // "<name> lost: no heartbeat for 3.1 s (last seen at step 17)"; with
  // `self` (e.g. "this rank") and `self_step` >= 0 the parenthesis adds
  // "; this rank at step 18".
  std::string Describe(absl::string_view self = "",
                       int64_t self_step = -1) const;
};

class PeerTracker {
 public:
  // `failure_timeout` > 0: how long a tracked peer may stay silent.
  explicit PeerTracker(absl::Duration failure_timeout);

  // Starts tracking `id` as heard from at `now`. No-op for a peer already
  // tracked or forgotten.
  void Track(int id, std::string name, absl::Time now);
  // `id` was heard from at `now`, at `step` when step >= 0. No-op for a
  // peer not tracked.
  void Seen(int id, absl::Time now, int64_t step = -1);
  // The peers could not be observed at `now` (e.g. the store that carries
  // their heartbeats is unreachable): every tracked peer but `except` that
  // is not yet past the timeout counts as heard from, so that only the
  // unreachable one can be found lost. A peer already past it stays lost.
  void Excuse(int except, absl::Time now);
  // `id` finished cleanly: never tracked again.
  void Forget(int id);
  bool tracked(int id) const;
  // Peers tracked and not forgotten.
  int num_tracked() const;
  // The tracked peer silent the longest, if that is longer than the
  // failure timeout.
  std::optional<LostPeer> FindLost(absl::Time now) const;

  absl::Duration failure_timeout() const { return failure_timeout_; }

 private:
  struct Peer {
    std::string name;
    absl::Time last_seen;
    int64_t last_step = -1;
    bool forgotten = false;
  };
  const absl::Duration failure_timeout_;
  mutable absl::Mutex mu_;
  std::map<int, Peer> peers_ ABSL_GUARDED_BY(mu_);
};

// What a LivenessMonitor beats through (the job's store, the parameter
// servers). Called from the monitor's thread only.
class HeartbeatSource {
 public:
  virtual ~HeartbeatSource() = default;
  // Sends one heartbeat at `step` and records in `peers` what it observed
  // (Track/Seen/Forget at `now`). Should return within about one period. A
  // non-OK status is a verdict by itself (e.g. a server reporting that the
  // job failed); its message is the verdict.
  virtual absl::Status Beat(int64_t step, absl::Time now,
                            PeerTracker& peers) = 0;
  // This process finished cleanly at `step`: tell the peers (best effort,
  // bounded by about one period).
  virtual void Finish(int64_t step) {}
};

struct LivenessOptions {
  // A peer silent for longer than this is lost. Default 30 s; > 0.
  absl::Duration failure_timeout = absl::Seconds(30);
  // Time between heartbeats; zero means failure_timeout / 6.
  absl::Duration period = absl::ZeroDuration();
  // How this process is named in verdicts ("this rank" gives "...; this
  // rank at step S)"); empty: the verdict names only the peer.
  std::string self;
  // Receives the verdict once, on the monitor's thread. Default: logged
  // with LOG(ERROR).
  std::function<void(const std::string& verdict)> on_verdict;
  // After a verdict, end the process with _exit(exit_code) unless Stop()
  // is called within this time. Default infinite: never.
  absl::Duration exit_after_verdict = absl::InfiniteDuration();
  int exit_code = 1;
  // The clock of the detection (tests pass a fake one). Default absl::Now.
  std::function<absl::Time()> now;

  absl::Status Validate() const;
  absl::Duration EffectivePeriod() const;
};

class LivenessMonitor {
 public:
  // Starts the thread. `source` may be null (the owner feeds tracker()
  // itself, e.g. a server from its RPC handlers). INVALID_ARGUMENT on bad
  // options.
  static absl::StatusOr<std::unique_ptr<LivenessMonitor>> Start(
      LivenessOptions options, std::unique_ptr<HeartbeatSource> source);
  ~LivenessMonitor();  // Stop()

  PeerTracker& tracker() { return tracker_; }
  // The step this process is at (used in heartbeats and verdicts).
  void SetStep(int64_t step) { step_.store(step); }
  int64_t step() const { return step_.load(); }
  // This process finished cleanly: tells the peers through the source, and
  // no verdict is passed afterwards. Blocking for about one period.
  void Finish();
  // Blocks until a verdict or `timeout`; returns the verdict if any.
  std::optional<std::string> AwaitVerdict(absl::Duration timeout);
  // Stops the thread (and cancels a pending exit). Idempotent; blocking
  // for at most one heartbeat.
  void Stop();

 private:
  LivenessMonitor(LivenessOptions options,
                  std::unique_ptr<HeartbeatSource> source);
  void Loop();
  absl::Time Now() const;
  void Deliver(const std::string& verdict);

  const LivenessOptions options_;
  const absl::Duration period_;
  std::unique_ptr<HeartbeatSource> source_;
  PeerTracker tracker_;
  std::atomic<int64_t> step_{0};

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> verdict_ ABSL_GUARDED_BY(mu_);
  // Serializes beats with Finish() (the source is not thread-safe).
  absl::Mutex source_mu_;
  std::thread thread_;
};

}  // namespace ringside

#endif  // RINGSIDE_COMMON_LIVENESS_MONITOR_H_
