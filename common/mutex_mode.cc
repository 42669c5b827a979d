// The binaries' absl::Mutex runs without deadlock detection. Debian's
// libabsl (20220623) is built in debug mode, where every Mutex::Lock
// records the lock in a global graph of lock orders (GraphCycles) to find
// cycles: in `perf record -a` of async_ps at n = 4 on a 1 Gbit/s link
// (8 processes on 2 cores) GraphCycles took 1.5% of all CPU, and 0.5% of
// transport_bench's.
// Linked into the binaries only (worker, ps_server, compare, launch,
// predict, sample and the benchmarks: //common:binary_mutex_mode); the
// tests keep the detection, where a lock-order cycle aborts with both
// stacks.
#include "absl/synchronization/mutex.h"

namespace {

__attribute__((constructor(103))) void TurnOffDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace
