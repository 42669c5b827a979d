// Whether this binary has CUDA, and the CUDA device facts the worker needs
// (make a device current, its name and PCI bus id), as absl::Status.
//
// Built with --config=cuda this is the CUDA runtime (cuda_device.cc);
// without it BuiltWithCuda() is false and every call returns UNIMPLEMENTED
// "CUDA device: built without CUDA: rebuild with --config=cuda"
// (cuda_device_stub.cc). Errors otherwise carry CUDA's own message and our
// file:line (device/cuda_status.h).
//
// Thread-safe (as the CUDA runtime is). Calls that name a device make it
// current on the calling thread and leave it so.
#ifndef RINGSIDE_DEVICE_CUDA_DEVICE_H_
#define RINGSIDE_DEVICE_CUDA_DEVICE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ringside {

// Whether this binary was built with --config=cuda.
bool BuiltWithCuda();

// UNIMPLEMENTED "<what>: built without CUDA: rebuild with --config=cuda":
// what every device call answers in the default build.
inline absl::Status BuiltWithoutCudaError(absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(what, ": built without CUDA: rebuild with --config=cuda"));
}

// cudaSetDevice. Non-blocking.
absl::Status SetCudaDevice(int device);
// The device's name ("NVIDIA H100 80GB HBM3") and PCI bus id
// ("0000:3b:00.0"). Blocking.
absl::StatusOr<std::string> CudaDeviceName(int device);
absl::StatusOr<std::string> CudaPciBusId(int device);
// Bytes of the device's memory in use by anyone (cudaMemGetInfo: total
// less free), this process's context included. Blocking.
absl::StatusOr<int64_t> CudaMemoryInUse(int device);

}  // namespace ringside

#endif  // RINGSIDE_DEVICE_CUDA_DEVICE_H_
