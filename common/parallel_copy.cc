#include "common/parallel_copy.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace ringside {

namespace {
constexpr int64_t kBytesPerThread = int64_t{1} << 20;
}  // namespace

int CopyThreads(int64_t bytes) {
  const int64_t wanted = bytes / kBytesPerThread;
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({wanted, kMaxCopyThreads, omp_get_max_threads()})));
}

void ParallelCopy(void* dst, const void* src, int64_t bytes) {
  const int threads = CopyThreads(bytes);
  if (threads <= 1) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  char* out = static_cast<char*>(dst);
  const char* in = static_cast<const char*>(src);
  // Parts of 64-byte multiples, the last takes the rest.
  const int64_t part = (bytes / threads) & ~int64_t{63};
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = t * part;
    const int64_t end = t + 1 == threads ? bytes : begin + part;
    std::memcpy(out + begin, in + begin, end - begin);
  }
}

}  // namespace ringside
