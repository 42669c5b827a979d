// Steady-clock timing helpers. Thread-compatible (no shared state).
#ifndef RINGSIDE_COMMON_STOPWATCH_H_
#define RINGSIDE_COMMON_STOPWATCH_H_

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <time.h>

namespace ringside {

// Seconds on the steady clock since an arbitrary epoch.
inline double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time this thread has used, in seconds (CLOCK_THREAD_CPUTIME_ID:
// user and system time, not the time it waited for a core).
inline double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// CPU time this process has used (every thread's, those that ended too;
// not its children's), in seconds (CLOCK_PROCESS_CPUTIME_ID).
inline double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
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

// The median of timed samples (the mean of the middle two for an even
// count); `samples` must not be empty.
inline double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2]
                    : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
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
