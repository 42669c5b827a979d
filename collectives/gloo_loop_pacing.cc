#include "collectives/gloo_loop_pacing.h"

#include <dlfcn.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

using EpollWait = int (*)(int, struct epoll_event*, int, int);

std::atomic<bool> pacing{true};
std::atomic<int64_t> total_calls{0};
std::atomic<int64_t> total_pauses{0};

std::mutex tids_mutex;
std::vector<pid_t>& LoopTids() {
  static auto* tids = new std::vector<pid_t>();
  return *tids;
}

EpollWait RealEpollWait() {
  static const EpollWait real =
      reinterpret_cast<EpollWait>(dlsym(RTLD_NEXT, "epoll_wait"));
  return real;
}

int64_t NowNanos() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Whether `caller` lies in libgloo.so.
bool InGloo(void* caller) {
  Dl_info info;
  return dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libgloo") != nullptr;
}

enum class ThreadKind { kUnknown, kGlooLoop, kOther };

struct LoopThreadState {
  ThreadKind kind = ThreadKind::kUnknown;
  SpinBrake brake;
};
thread_local LoopThreadState state;

void Pause() {
  const timespec pause{0, kPauseMicros * 1000};
  nanosleep(&pause, nullptr);
}

// /proc/self/task/<tid>/schedstat: "on-cpu-ns wait-ns timeslices".
bool ReadSchedstat(pid_t tid, double* cpu_s, double* wait_s) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  unsigned long long on_cpu = 0, waiting = 0;
  const bool ok = std::fscanf(f, "%llu %llu", &on_cpu, &waiting) == 2;
  std::fclose(f);
  if (!ok) return false;
  *cpu_s = on_cpu * 1e-9;
  *wait_s = waiting * 1e-9;
  return true;
}

}  // namespace

absl::StatusOr<GlooEventLoop> ParseGlooEventLoop(absl::string_view name) {
  if (name == "paced") return GlooEventLoop::kPaced;
  if (name == "idle") return GlooEventLoop::kIdle;
  if (name == "normal") return GlooEventLoop::kNormal;
  return absl::InvalidArgumentError(absl::StrCat(
      "gloo event loop '", name, "': expected paced, idle or normal"));
}

std::string GlooEventLoopName(GlooEventLoop loop) {
  switch (loop) {
    case GlooEventLoop::kPaced:
      return "paced";
    case GlooEventLoop::kIdle:
      return "idle";
    case GlooEventLoop::kNormal:
      return "normal";
  }
  return "?";
}

void SetGlooLoopPacing(bool on) { pacing.store(on); }
bool GlooLoopPacing() { return pacing.load(); }

GlooLoopStats ReadGlooLoopStats() {
  GlooLoopStats stats;
  stats.calls = total_calls.load();
  stats.pauses = total_pauses.load();
  std::lock_guard<std::mutex> lock(tids_mutex);
  stats.threads = static_cast<int>(LoopTids().size());
  for (pid_t tid : LoopTids()) {
    double cpu = 0, wait = 0;
    if (!ReadSchedstat(tid, &cpu, &wait)) continue;  // the thread ended
    stats.cpu_s += cpu;
    stats.wait_s += wait;
  }
  return stats;
}

}  // namespace ringside

// The process's epoll_wait: libc's, paced on Gloo's loop threads.
extern "C" int epoll_wait(int epfd, struct epoll_event* events, int maxevents,
                          int timeout) {
  using ringside::state;
  using ringside::ThreadKind;
  if (state.kind == ThreadKind::kUnknown) {
    state.kind = ringside::InGloo(__builtin_return_address(0))
                     ? ThreadKind::kGlooLoop
                     : ThreadKind::kOther;
    if (state.kind == ThreadKind::kGlooLoop) {
      prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // pauses of kPauseMicros
      std::lock_guard<std::mutex> lock(ringside::tids_mutex);
      ringside::LoopTids().push_back(gettid());
    }
  }
  if (state.kind != ThreadKind::kGlooLoop) {
    return ringside::RealEpollWait()(epfd, events, maxevents, timeout);
  }
  ringside::total_calls.fetch_add(1, std::memory_order_relaxed);
  if (state.brake.Enter(ringside::NowNanos()) && ringside::pacing.load()) {
    ringside::total_pauses.fetch_add(1, std::memory_order_relaxed);
    ringside::Pause();
  }
  const int n = ringside::RealEpollWait()(epfd, events, maxevents, timeout);
  state.brake.Returned(n, ringside::NowNanos());
  return n;
}
