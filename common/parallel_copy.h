// Large host copies on several threads: a memory-bound copy of many
// megabytes runs several times faster on a few cores than on one, which
// matters where a batch is gathered and staged for a GPU ahead of each
// step (SyntheticClassification::TrainBatch, BatchStager). Below 1 MiB
// one thread copies; above, one more thread per MiB up to kMaxCopyThreads
// and the cores OpenMP may use. Thread-safe.
#ifndef RINGSIDE_COMMON_PARALLEL_COPY_H_
#define RINGSIDE_COMMON_PARALLEL_COPY_H_

#include <cstdint>

namespace ringside {

inline constexpr int kMaxCopyThreads = 8;

// The threads a copy of `bytes` uses: 1 below 1 MiB, then bytes / 1 MiB,
// at most kMaxCopyThreads and omp_get_max_threads().
int CopyThreads(int64_t bytes);

// memcpy(dst, src, bytes) in CopyThreads(bytes) contiguous parts; the
// ranges must not overlap.
void ParallelCopy(void* dst, const void* src, int64_t bytes);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_PARALLEL_COPY_H_
