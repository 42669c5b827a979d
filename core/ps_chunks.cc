#include "core/ps_chunks.h"

#include <algorithm>

namespace ringside {

int64_t AutoChunkBytes(int64_t model_bytes, int num_servers) {
  constexpr int64_t kMin = int64_t{128} << 10, kMax = int64_t{1} << 20;
  const int64_t per_server = model_bytes / std::max(1, num_servers);
  const int64_t chunk = std::clamp(per_server / 16, kMin, kMax);
  return chunk / 1024 * 1024;
}

}  // namespace ringside
