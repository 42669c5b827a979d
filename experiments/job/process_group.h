// ProcessGroup: runs a set of child processes (servers, workers) as one
// unit. Each child's stdout is split into lines and handed to a callback;
// its stderr is relayed line by line to our stderr as "[label] line". If any
// child exits non-zero or by a signal, the others are terminated (SIGTERM,
// then SIGKILL after a grace period) and the group fails with a status that
// names the child, its exit code or signal and its last stderr lines. An
// overall deadline bounds the life of the group.
//
// Each child runs in its own process group (so grandchildren started by a
// shell script are signalled too), with stdin on /dev/null, and with
// PR_SET_PDEATHSIG = SIGKILL so it dies if this process dies.
//
// Thread-safety: thread-compatible. One thread drives a group (Start,
// RunUntil, Wait, Shutdown, destructor); callbacks run on that thread from
// inside RunUntil/Shutdown and must not call back into the group. That
// thread must outlive the children: PR_SET_PDEATHSIG fires when the thread
// that forked a child exits.
#ifndef RINGSIDE_EXPERIMENTS_JOB_PROCESS_GROUP_H_
#define RINGSIDE_EXPERIMENTS_JOB_PROCESS_GROUP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ringside {

// Called with the child's label and one stdout line (without the '\n').
using LineCallback =
    std::function<void(const std::string& label, absl::string_view line)>;

struct ChildSpec {
  // Names the child in relayed stderr and in errors, e.g. "worker/3".
  std::string label;
  // argv[0] is the program: a path, or a name looked up on $PATH.
  std::vector<std::string> argv;
  // Extra "KEY=VALUE" entries on top of our environment (they win).
  std::vector<std::string> env;
  // Receives each complete stdout line; a trailing partial line is delivered
  // at EOF. Default (empty): lines are relayed to our stderr like stderr.
  LineCallback on_stdout_line;
};

struct ProcessGroupOptions {
  // Wall time from construction after which every child is killed and
  // RunUntil returns DEADLINE_EXCEEDED. Default 1 hour.
  absl::Duration deadline = absl::Hours(1);
  // Time between SIGTERM and SIGKILL when shutting children down. Default 5 s.
  absl::Duration kill_grace = absl::Seconds(5);
  // Relay each child's stderr lines to our stderr, prefixed "[label] ".
  // Default true.
  bool relay_stderr = true;
  // Number of a child's last stderr lines kept for error messages. Default 20.
  int stderr_tail_lines = 20;
  // A child exiting non-zero (or by a signal) fails the group and shuts the
  // others down. With false it is only recorded (exit_code, stderr_tail):
  // the others keep running, e.g. to watch how they react to a lost peer.
  // Default true.
  bool stop_on_failure = true;
};

class ProcessGroup {
 public:
  explicit ProcessGroup(ProcessGroupOptions options = {});
  // Shuts down (SIGTERM, grace, SIGKILL) and reaps every child still running.
  ~ProcessGroup();

  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Spawns a child; returns its id (0, 1, ... in start order). Blocks only
  // until the child has exec'd. Fails if exec fails (NOT_FOUND or
  // PERMISSION_DENIED naming the program) or after Shutdown
  // (FAILED_PRECONDITION).
  absl::StatusOr<int> Start(ChildSpec spec);

  // Pumps output and reaps exits until `done()` is true (checked after
  // every batch of events; may be empty = never). Blocking. Returns:
  //   true  - done() became true;
  //   false - `timeout` passed or no child is left running, done() false;
  //           nothing was killed;
  //   error - a child failed (INTERNAL, naming it) or the group deadline
  //           passed (DEADLINE_EXCEEDED, naming who was still running); in
  //           both cases every child has been shut down before returning.
  absl::StatusOr<bool> RunUntil(const std::function<bool()>& done,
                                absl::Duration timeout);

  // RunUntil every child has exited; OK if all exited with code 0 (or were
  // shut down by us). Bounded by the group deadline.
  absl::Status Wait();

  // Terminates every running child: SIGTERM to its process group, output
  // pumped for up to kill_grace, then SIGKILL. Children ended this way do
  // not count as failures. Returns the labels of the children that were
  // still running. Blocking (at most kill_grace + about 1 s). Idempotent;
  // no Start afterwards.
  std::vector<std::string> Shutdown();

  // Sends `signal` to child `id` (its process group) unless it has exited;
  // its exit then counts as ended by us, not as a failure.
  void Kill(int id, int signal);

  bool exited(int id) const;    // true once the child is reaped
  int exit_code(int id) const;  // exit code, or -signal; 0 if running
  const std::string& label(int id) const;
  // The child's last stderr lines (at most stderr_tail_lines), oldest first.
  std::vector<std::string> stderr_tail(int id) const;
  int size() const { return static_cast<int>(children_.size()); }
  // Labels of the children not yet reaped.
  std::vector<std::string> RunningLabels() const;

 private:
  struct Child;

  // One poll() round of at most `max_wait`, then reaps exited children.
  void PumpOnce(absl::Duration max_wait);
  void ReadAvailable(Child& c, bool is_stdout);
  void DeliverLine(Child& c, bool is_stdout, absl::string_view line);
  void CloseFd(int& fd, Child& c, bool is_stdout);
  void ReapExited();
  void OnExit(Child& c, int wait_status);
  absl::Status FailureStatus(const Child& c) const;

  ProcessGroupOptions options_;
  absl::Time deadline_;
  bool shut_down_ = false;
  absl::Status failure_;  // first child failure
  std::vector<std::unique_ptr<Child>> children_;
};

// Runs one child to its end in a group with `options` (its deadline bounds
// the run): Start, then Wait. OK when it exited 0; otherwise the group's
// error (naming the child, with its last stderr lines) or Start's.
// Blocking.
absl::Status RunToCompletion(ChildSpec spec,
                             const ProcessGroupOptions& options);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_PROCESS_GROUP_H_
