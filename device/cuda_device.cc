// cuda_device.h on the CUDA runtime (--config=cuda).
#include "device/cuda_device.h"

#include <cuda_runtime_api.h>

#include "device/cuda_status.h"

namespace ringside {

bool BuiltWithCuda() { return true; }

absl::Status SetCudaDevice(int device) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CudaDeviceName(int device) {
  cudaDeviceProp prop;
  RS_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  return std::string(prop.name);
}

absl::StatusOr<std::string> CudaPciBusId(int device) {
  char bus_id[64] = {};
  RS_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, device));
  return std::string(bus_id);
}

absl::StatusOr<int64_t> CudaMemoryInUse(int device) {
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  size_t free = 0, total = 0;
  RS_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
  return static_cast<int64_t>(total - free);
}

}  // namespace ringside
