// Steady-clock timing helpers. Thread-compatible (no shared state).
#ifndef RINGSIDE_COMMON_STOPWATCH_H_
#define RINGSIDE_COMMON_STOPWATCH_H_

#include <chrono>
#include <thread>

namespace ringside {

// Seconds on the steady clock since an arbitrary epoch.
inline double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Sleeps until NowSeconds() >= deadline (no-op if already past).
inline void SleepUntil(double deadline) {
  const double left = deadline - NowSeconds();
  if (left > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(left));
  }
}

// Busy-waits on this thread for `seconds` of steady-clock time, keeping
// its core, as compute would (no-op for seconds <= 0).
inline void SpinFor(double seconds) {
  const double deadline = NowSeconds() + seconds;
  while (NowSeconds() < deadline) {
  }
}

// Measures elapsed wall time from construction or the last Reset().
class Stopwatch {
 public:
  Stopwatch() : start_(NowSeconds()) {}
  void Reset() { start_ = NowSeconds(); }
  double ElapsedSeconds() const { return NowSeconds() - start_; }

 private:
  double start_;
};

}  // namespace ringside

#endif  // RINGSIDE_COMMON_STOPWATCH_H_
