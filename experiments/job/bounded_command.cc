#include "experiments/job/bounded_command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"

extern char** environ;

namespace ringside {

absl::Status RunBoundedCommand(const std::vector<std::string>& argv,
                               absl::Duration timeout) {
  const std::string line = absl::StrJoin(argv, " ");
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  // Not ProcessGroup: its 50 ms poll tick per exit would make a topology of
  // a hundred commands take seconds.
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = -1;
  const int spawn_error =
      posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(err[1]);
  if (spawn_error != 0) {
    close(err[0]);
    return absl::NotFoundError(absl::StrCat("cannot run '", argv[0],
                                            "': ", std::strerror(spawn_error)));
  }
  // Collect stderr until EOF or the deadline, then reap.
  const absl::Time deadline = absl::Now() + timeout;
  std::string stderr_text;
  bool timed_out = false;
  for (;;) {
    const int64_t left_ms =
        absl::ToInt64Milliseconds(deadline - absl::Now()) + 1;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p = {err[0], POLLIN, 0};
    const int ready =
        poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = read(err[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the command (and anything it ran) is done
    if (stderr_text.size() < 4096) stderr_text.append(buf, n);
  }
  close(err[0]);
  if (timed_out) kill(pid, SIGKILL);
  // Reap; past the deadline, kill.
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat(line, ": waitpid: ", std::strerror(errno)));
    }
    if (!timed_out && absl::Now() >= deadline) {
      timed_out = true;
      kill(pid, SIGKILL);
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  std::string tail(absl::StripAsciiWhitespace(stderr_text));
  tail = absl::StrReplaceAll(tail, {{"\n", " | "}});
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        line, " did not finish within ", absl::FormatDuration(timeout),
        " (killed)", tail.empty() ? "" : "; stderr: ", tail));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      line,
      WIFEXITED(status)
          ? absl::StrCat(" exited with code ", WEXITSTATUS(status))
          : absl::StrCat(" was killed by signal ", WTERMSIG(status)),
      tail.empty() ? "; no stderr output" : absl::StrCat("; stderr: ", tail)));
}

}  // namespace ringside
