// The CPU time every core of this machine has spent busy since boot, as the
// kernel counts it in /proc/stat's first line: user, nice, system, irq and
// softirq (what any process or the kernel's network stack ran, wherever it
// was charged), not idle, iowait or steal. In seconds; the difference of two
// readings is what the machine did between them, at the kernel's tick
// resolution (USER_HZ, 10 ms here). Thread-safe.
#ifndef RINGSIDE_COMMON_MACHINE_CPU_H_
#define RINGSIDE_COMMON_MACHINE_CPU_H_

#include "absl/status/statusor.h"

namespace ringside {

// UNAVAILABLE where /proc/stat cannot be read or parsed.
absl::StatusOr<double> MachineBusySeconds();

// Of that, the time every core spent in interrupts (irq and softirq: the
// network stack's receive path, wherever it ran), which the kernel's tick
// accounting charges to no process. Same errors.
absl::StatusOr<double> MachineInterruptSeconds();

}  // namespace ringside

#endif  // RINGSIDE_COMMON_MACHINE_CPU_H_
