// The memory of this process as the kernel counts it (/proc/self/status):
// resident now (VmRSS) and its peak (VmHWM), in bytes; 0 where unknown
// (no /proc). Thread-safe.
#ifndef RINGSIDE_COMMON_PROCESS_MEMORY_H_
#define RINGSIDE_COMMON_PROCESS_MEMORY_H_

#include <cstdint>

namespace ringside {

int64_t RssBytes();
int64_t PeakRssBytes();

}  // namespace ringside

#endif  // RINGSIDE_COMMON_PROCESS_MEMORY_H_
