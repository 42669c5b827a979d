// Pacing of Gloo's TCP event loop: a spin brake, and what the loop waited
// for a core.
//
// Gloo's loop (Debian's libgloo 0.0~git20220518, as upstream still is)
// handles a socket's events only if it can try_lock that pair's mutex,
// which the rank's own thread holds while it writes to the socket; epoll is
// level-triggered, so while the lock is held the loop calls epoll_wait
// again at once (pytorch/gloo issue #246). With more threads than cores the
// spinning loop takes the core from the thread that holds the lock.
//
// This library defines epoll_wait for the process (the executable's
// definition comes before libc's for every shared library, libgloo.so
// included) and forwards every call to libc's. On a thread whose caller is
// libgloo.so (Gloo's loop threads) and while pacing is on, a run of
// kSpinCalls calls that each return events within kSpinGap of the previous
// return (the handler did no I/O, a spin) makes each further such call
// sleep kPauseMicros first, until a call blocks or returns no events: the
// lock holder gets the core, the loop keeps the normal policy, so it never
// starves beside busy processes as a SCHED_IDLE loop does. The loop
// threads' time runnable but waiting for a core (/proc/self/task/<tid>/
// schedstat) is summed by GlooLoopWaitSeconds, so that starvation is
// measured, not silent.
//
// Thread-safe.
#ifndef RINGSIDE_COLLECTIVES_GLOO_LOOP_PACING_H_
#define RINGSIDE_COLLECTIVES_GLOO_LOOP_PACING_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

// How Gloo's event loop is scheduled (worker --gloo_event_loop):
//   kPaced:  the normal policy with the spin brake (the default);
//   kIdle:   SCHED_IDLE, no brake: it runs only on a core nothing else
//            wants, so beside busy processes it starves;
//   kNormal: the normal policy, no brake: as PyTorch runs Gloo.
enum class GlooEventLoop { kPaced, kIdle, kNormal };

// "paced", "idle", "normal"; INVALID_ARGUMENT naming the choices otherwise.
absl::StatusOr<GlooEventLoop> ParseGlooEventLoop(absl::string_view name);
std::string GlooEventLoopName(GlooEventLoop loop);

inline constexpr int kSpinCalls = 16;
inline constexpr int64_t kSpinGapNanos = 3000;
inline constexpr int64_t kPauseMicros = 20;

// Turns the brake on or off for every Gloo loop thread of the process
// (default on); CreateGlooTcpDevice sets it from its GlooEventLoop, so the
// process's devices share the last one's choice.
void SetGlooLoopPacing(bool on);
bool GlooLoopPacing();

// Counters since the process started, over every Gloo loop thread.
struct GlooLoopStats {
  int threads = 0;         // Gloo loop threads seen (that called epoll_wait)
  int64_t calls = 0;       // their epoll_wait calls
  int64_t pauses = 0;      // the calls the brake delayed
  // From /proc/self/task/<tid>/schedstat; a thread that has ended, or a
  // kernel without schedstat, adds nothing.
  double wait_s = 0;       // runnable but waiting for a core
  double cpu_s = 0;        // on a core
};
GlooLoopStats ReadGlooLoopStats();

// The brake's rule for one loop thread, on the monotonic clock in ns
// (exposed for tests): Enter(now) before each epoll_wait says whether to
// pause first; Returned(events, now) after it.
class SpinBrake {
 public:
  bool Enter(int64_t now_ns) {
    const bool spin_like =
        last_return_ns_ != 0 && now_ns - last_return_ns_ < kSpinGapNanos;
    quick_ = spin_like ? quick_ + 1 : 0;
    return quick_ >= kSpinCalls;
  }
  void Returned(int events, int64_t now_ns) {
    last_return_ns_ = events > 0 ? now_ns : 0;
  }

 private:
  int64_t last_return_ns_ = 0;  // 0: the last call returned no events
  int quick_ = 0;               // consecutive spin-like calls
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_LOOP_PACING_H_
