// What the cores of this machine did, as the kernel counts it in
// /proc/stat's first line (all cores, since boot, at its tick resolution:
// USER_HZ, 10 ms here), and what this process and its children used
// (getrusage), so that two snapshots around a job tell how much CPU other
// processes took meanwhile. Thread-safe.
#ifndef RINGSIDE_COMMON_MACHINE_CPU_H_
#define RINGSIDE_COMMON_MACHINE_CPU_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

// The time every core has spent in interrupts (irq and softirq: the
// network stack's receive path, wherever it ran); the tick accounting
// charges it to no process. Seconds. UNAVAILABLE where /proc/stat cannot be
// read or parsed.
absl::StatusOr<double> MachineInterruptSeconds();

// /proc/stat's first line, in seconds of all cores together.
struct MachineCpuTimes {
  double busy_s = 0;       // user + nice + system + irq + softirq
  double interrupt_s = 0;  // irq + softirq
  double steal_s = 0;      // taken by the hypervisor for other guests
};

// Parses "cpu user nice system idle iowait irq softirq [steal ...]" (in
// ticks of `ticks_per_second`); INVALID_ARGUMENT naming the line otherwise.
absl::StatusOr<MachineCpuTimes> ParseProcStatCpuLine(absl::string_view line,
                                                     long ticks_per_second);

// /proc/stat read now; UNAVAILABLE where it cannot be read or parsed.
absl::StatusOr<MachineCpuTimes> ReadMachineCpuTimes();

// CPU seconds (user + system) of this process and of its children that
// have ended and been waited for (getrusage SELF + CHILDREN).
double OwnCpuSeconds();

// One reading of both, with the monotonic time it was taken.
struct CpuSnapshot {
  MachineCpuTimes machine;
  double own_s = 0;
  double at_s = 0;  // NowSeconds() (common/stopwatch.h)
};
absl::StatusOr<CpuSnapshot> TakeCpuSnapshot();

// Between two snapshots (`before` first): the cores other processes kept
// busy on average (the machine's busy time less this process's and its
// waited-for children's, over the wall time; >= 0), and the cores the
// hypervisor took, and the cores busy in all (busy_cores). Children still
// running at `after` are counted as others': take `after` once they have
// been waited for. 0 for an interval shorter than a tick.
struct OtherCpuLoad {
  double cores = 0;
  double steal_cores = 0;
  // Every process's together, this one's included: the machine's busy
  // cores on average over the interval.
  double busy_cores = 0;
};
OtherCpuLoad OtherCpuBetween(const CpuSnapshot& before,
                             const CpuSnapshot& after);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_MACHINE_CPU_H_
