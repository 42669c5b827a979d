#include "experiments/job/process_group.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace ringside {

struct ProcessGroup::Child {
  std::string label;
  LineCallback on_stdout_line;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string out_buf;  // bytes after the last '\n' seen on stdout
  std::string err_buf;  // same for stderr
  std::deque<std::string> err_tail;
  bool exited = false;
  int exit_code = 0;  // exit code, or -signal
  bool terminated_by_us = false;
};

namespace {

// Longest single wait inside the event loop, so that exits are noticed even
// when a grandchild keeps a pipe open.
constexpr absl::Duration kMaxPoll = absl::Milliseconds(50);
// How many stderr lines an error message quotes.
constexpr int kQuotedStderrLines = 10;

absl::Status ErrnoStatus(int err, absl::string_view what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

// A path as given, or `name` looked up on $PATH.
absl::StatusOr<std::string> ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("'", name, "' not found on $PATH"));
}

// Our environment with `extra` KEY=VALUE entries added or replaced.
std::vector<std::string> MergedEnvironment(
    const std::vector<std::string>& extra) {
  std::set<std::string> keys;
  for (const std::string& kv : extra) keys.insert(kv.substr(0, kv.find('=')));
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    if (keys.count(kv.substr(0, kv.find('='))) == 0) env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void WriteToStderr(const std::string& label, absl::string_view line) {
  const std::string text = absl::StrCat("[", label, "] ", line, "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProcessGroup::ProcessGroup(ProcessGroupOptions options)
    : options_(std::move(options)),
      deadline_(absl::Now() + options_.deadline) {}

ProcessGroup::~ProcessGroup() {
  Shutdown();
  for (auto& c : children_) {
    if (c->out_fd >= 0) close(c->out_fd);
    if (c->err_fd >= 0) close(c->err_fd);
  }
}

absl::StatusOr<int> ProcessGroup::Start(ChildSpec spec) {
  if (shut_down_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start ", spec.label, ": group is shut down"));
  }
  if (spec.argv.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty argv for ", spec.label));
  }
  absl::StatusOr<std::string> path = ResolveProgram(spec.argv[0]);
  if (!path.ok()) return path.status();
  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls are allowed.
  std::vector<std::string> argv_strings = spec.argv;
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<std::string> env_strings = MergedEnvironment(spec.env);
  std::vector<char*> envp = CStrings(env_strings);

  int out[2], err[2], exec_err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe2");
  if (pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close(out[0]), close(out[1]);
    return ErrnoStatus(e, "pipe2");
  }
  if (pipe2(exec_err, O_CLOEXEC) != 0) {
    const int e = errno;
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    return ErrnoStatus(e, "pipe2");
  }
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Child: die with the parent, own process group, default signals.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) {
      sigaction(sig, &dfl, nullptr);
    }
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(path->c_str(), argv.data(), envp.data());
    const int e = errno;
    (void)!write(exec_err[1], &e, sizeof(e));
    _exit(127);
  }
  const int fork_errno = errno;
  if (devnull >= 0) close(devnull);
  close(out[1]), close(err[1]), close(exec_err[1]);
  if (pid < 0) {
    close(out[0]), close(err[0]), close(exec_err[0]);
    return ErrnoStatus(fork_errno, "fork");
  }
  setpgid(pid, pid);  // also done by the child; whichever runs first wins
  // The exec pipe closes on a successful exec; otherwise it carries errno.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_err[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(exec_err[0]);
  if (n == sizeof(exec_errno)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(out[0]), close(err[0]);
    return ErrnoStatus(
        exec_errno, absl::StrCat("cannot exec '", *path, "' for ", spec.label));
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);

  auto child = std::make_unique<Child>();
  child->label = std::move(spec.label);
  child->on_stdout_line = std::move(spec.on_stdout_line);
  child->pid = pid;
  child->out_fd = out[0];
  child->err_fd = err[0];
  children_.push_back(std::move(child));
  return size() - 1;
}

absl::StatusOr<bool> ProcessGroup::RunUntil(const std::function<bool()>& done,
                                            absl::Duration timeout) {
  const absl::Time end = timeout == absl::InfiniteDuration()
                             ? absl::InfiniteFuture()
                             : absl::Now() + timeout;
  while (true) {
    if (!failure_.ok()) {
      Shutdown();
      return failure_;
    }
    if (done && done()) return true;
    if (RunningLabels().empty()) return false;
    const absl::Time now = absl::Now();
    if (now >= deadline_) {
      const std::vector<std::string> running = Shutdown();
      return absl::DeadlineExceededError(absl::StrCat(
          "deadline of ", absl::FormatDuration(options_.deadline),
          " passed; still running: ", absl::StrJoin(running, ", ")));
    }
    if (now >= end) return false;
    PumpOnce(std::min(end, deadline_) - now);
  }
}

absl::Status ProcessGroup::Wait() {
  absl::StatusOr<bool> done = RunUntil(
      [this] { return RunningLabels().empty(); }, absl::InfiniteDuration());
  return done.status();
}

std::vector<std::string> ProcessGroup::Shutdown() {
  std::vector<std::string> running = RunningLabels();
  shut_down_ = true;
  if (running.empty()) return running;
  for (auto& c : children_) {
    if (c->exited) continue;
    c->terminated_by_us = true;
    kill(-c->pid, SIGTERM);
  }
  absl::Time end = absl::Now() + options_.kill_grace;
  while (!RunningLabels().empty() && absl::Now() < end) {
    PumpOnce(end - absl::Now());
  }
  for (auto& c : children_) {
    if (!c->exited) kill(-c->pid, SIGKILL);
  }
  // SIGKILL cannot be caught; this only waits for the kernel to deliver it.
  end = absl::Now() + absl::Seconds(2);
  while (!RunningLabels().empty() && absl::Now() < end) {
    PumpOnce(end - absl::Now());
  }
  return running;
}

void ProcessGroup::Kill(int id, int signal) {
  Child& c = *children_.at(id);
  if (c.exited) return;
  c.terminated_by_us = true;
  kill(-c.pid, signal);
}

std::vector<std::string> ProcessGroup::stderr_tail(int id) const {
  const Child& c = *children_.at(id);
  return std::vector<std::string>(c.err_tail.begin(), c.err_tail.end());
}

bool ProcessGroup::exited(int id) const { return children_.at(id)->exited; }

int ProcessGroup::exit_code(int id) const {
  return children_.at(id)->exit_code;
}

const std::string& ProcessGroup::label(int id) const {
  return children_.at(id)->label;
}

std::vector<std::string> ProcessGroup::RunningLabels() const {
  std::vector<std::string> labels;
  for (const auto& c : children_) {
    if (!c->exited) labels.push_back(c->label);
  }
  return labels;
}

void ProcessGroup::PumpOnce(absl::Duration max_wait) {
  std::vector<pollfd> fds;
  std::vector<std::pair<Child*, bool>> owners;  // (child, is_stdout)
  for (auto& c : children_) {
    if (c->out_fd >= 0) {
      fds.push_back({c->out_fd, POLLIN, 0});
      owners.push_back({c.get(), true});
    }
    if (c->err_fd >= 0) {
      fds.push_back({c->err_fd, POLLIN, 0});
      owners.push_back({c.get(), false});
    }
  }
  const absl::Duration wait =
      std::max(absl::ZeroDuration(), std::min(max_wait, kMaxPoll));
  const int ms = static_cast<int>(
      absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))));
  const int ready = poll(fds.data(), fds.size(), ms);
  if (ready > 0) {
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0)
        ReadAvailable(*owners[i].first, owners[i].second);
    }
  }
  ReapExited();
}

void ProcessGroup::ReadAvailable(Child& c, bool is_stdout) {
  int& fd = is_stdout ? c.out_fd : c.err_fd;
  std::string& buf = is_stdout ? c.out_buf : c.err_buf;
  char chunk[65536];
  while (fd >= 0) {
    const ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // EOF or a read error: flush the partial line, close
      CloseFd(fd, c, is_stdout);
      return;
    }
    buf.append(chunk, n);
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      DeliverLine(c, is_stdout,
                  absl::string_view(buf).substr(start, nl - start));
    }
    buf.erase(0, start);
  }
}

void ProcessGroup::CloseFd(int& fd, Child& c, bool is_stdout) {
  std::string& buf = is_stdout ? c.out_buf : c.err_buf;
  if (!buf.empty()) DeliverLine(c, is_stdout, buf);
  buf.clear();
  close(fd);
  fd = -1;
}

void ProcessGroup::DeliverLine(Child& c, bool is_stdout,
                               absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_stdout && c.on_stdout_line) {
    c.on_stdout_line(c.label, line);
    return;
  }
  if (!is_stdout) {
    c.err_tail.emplace_back(line);
    while (static_cast<int>(c.err_tail.size()) > options_.stderr_tail_lines) {
      c.err_tail.pop_front();
    }
  }
  if (options_.relay_stderr || is_stdout) WriteToStderr(c.label, line);
}

void ProcessGroup::ReapExited() {
  for (auto& c : children_) {
    if (c->exited) continue;
    int status = 0;
    pid_t r;
    do {
      r = waitpid(c->pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != c->pid) continue;
    // Everything the child wrote before exiting is in the pipes now.
    if (c->out_fd >= 0) ReadAvailable(*c, true);
    if (c->err_fd >= 0) ReadAvailable(*c, false);
    // Leftover grandchildren in its process group would hold the pipes.
    kill(-c->pid, SIGKILL);
    if (c->out_fd >= 0) CloseFd(c->out_fd, *c, true);
    if (c->err_fd >= 0) CloseFd(c->err_fd, *c, false);
    OnExit(*c, status);
  }
}

void ProcessGroup::OnExit(Child& c, int wait_status) {
  c.exited = true;
  c.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                       : -WTERMSIG(wait_status);
  if (c.exit_code != 0 && !c.terminated_by_us && failure_.ok() &&
      options_.stop_on_failure) {
    failure_ = FailureStatus(c);
  }
}

absl::Status ProcessGroup::FailureStatus(const Child& c) const {
  std::string msg =
      c.exit_code > 0
          ? absl::StrCat(c.label, " exited with code ", c.exit_code)
          : absl::StrCat(c.label, " was killed by signal ", -c.exit_code, " (",
                         strsignal(-c.exit_code), ")");
  const int n = std::min<int>(c.err_tail.size(), kQuotedStderrLines);
  if (n == 0) {
    absl::StrAppend(&msg, "; no stderr output");
  } else {
    absl::StrAppend(&msg, "; last stderr lines:");
    for (int i = c.err_tail.size() - n; i < static_cast<int>(c.err_tail.size());
         ++i) {
      absl::StrAppend(&msg, "\n  ", c.err_tail[i]);
    }
  }
  return absl::InternalError(msg);
}

absl::Status RunToCompletion(ChildSpec spec,
                             const ProcessGroupOptions& options) {
  ProcessGroup group(options);
  absl::StatusOr<int> id = group.Start(std::move(spec));
  return id.ok() ? group.Wait() : id.status();
}

}  // namespace ringside
