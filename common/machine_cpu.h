// The time every core of this machine has spent in interrupts since boot
// (irq and softirq: the network stack's receive path, wherever it ran), as
// the kernel counts it in /proc/stat's first line. Its tick accounting
// charges that time to no process. In seconds; the difference of two
// readings is what the cores did between them, at the kernel's tick
// resolution (USER_HZ, 10 ms here). Thread-safe.
#ifndef RINGSIDE_COMMON_MACHINE_CPU_H_
#define RINGSIDE_COMMON_MACHINE_CPU_H_

#include "absl/status/statusor.h"

namespace ringside {

// UNAVAILABLE where /proc/stat cannot be read or parsed.
absl::StatusOr<double> MachineInterruptSeconds();

}  // namespace ringside

#endif  // RINGSIDE_COMMON_MACHINE_CPU_H_
