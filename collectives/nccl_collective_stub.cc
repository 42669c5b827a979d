// CreateNcclCollective and CudaDeviceCount in a build without
// --config=cuda: the library links everywhere and says why NCCL is absent.
#include "collectives/nccl_collective.h"

namespace ringside {
namespace {

absl::Status NotBuilt() {
  return absl::UnimplementedError(
      "NCCL collective: built without --config=cuda");
}

}  // namespace

absl::StatusOr<int> CudaDeviceCount() { return NotBuilt(); }

absl::StatusOr<std::unique_ptr<Collective>> CreateNcclCollective(
    Store& /*store*/, int /*rank*/, int /*size*/,
    const NcclCollectiveOptions& /*options*/) {
  return NotBuilt();
}

}  // namespace ringside
