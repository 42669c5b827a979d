// cuda_support.h on the CUDA runtime (--config=cuda).
#include "worker/cuda_support.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collectives/cuda_status.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

// CudaStatus, clearing the thread's last error on failure (a later launch
// check must not report it again).
absl::Status Check(cudaError_t error, const char* what, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  return CudaStatus(error, what, __FILE__, line);
}

#define RS_CHECK_CUDA(call) RS_RETURN_IF_ERROR(Check((call), #call, __LINE__))

}  // namespace

bool BuiltWithCuda() { return true; }

absl::Status BuiltWithoutCudaError(absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(what, ": built without CUDA: rebuild with --config=cuda"));
}

absl::Status SetCudaDevice(int device) {
  RS_CHECK_CUDA(cudaSetDevice(device));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CudaDeviceName(int device) {
  cudaDeviceProp prop;
  RS_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  return std::string(prop.name);
}

absl::StatusOr<std::string> CudaPciBusId(int device) {
  char bus_id[64] = {};
  RS_CHECK_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, device));
  return std::string(bus_id);
}

absl::StatusOr<OwnedCudaStream> OwnedCudaStream::Create(int device) {
  RS_CHECK_CUDA(cudaSetDevice(device));
  OwnedCudaStream s;
  s.device_ = device;
  RS_CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking));
  return s;
}

OwnedCudaStream::OwnedCudaStream(OwnedCudaStream&& other) noexcept
    : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}

OwnedCudaStream& OwnedCudaStream::operator=(OwnedCudaStream&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(stream_, other.stream_);
  return *this;
}

OwnedCudaStream::~OwnedCudaStream() {
  if (stream_ == nullptr) return;
  if (cudaSetDevice(device_) != cudaSuccess ||
      cudaStreamDestroy(stream_) != cudaSuccess) {
    cudaGetLastError();
  }
}

absl::StatusOr<OwnedCudaEvent> OwnedCudaEvent::Create(int device, bool timing) {
  RS_CHECK_CUDA(cudaSetDevice(device));
  OwnedCudaEvent e;
  e.device_ = device;
  RS_CHECK_CUDA(cudaEventCreateWithFlags(
      &e.event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

OwnedCudaEvent::OwnedCudaEvent(OwnedCudaEvent&& other) noexcept
    : device_(other.device_), event_(std::exchange(other.event_, nullptr)) {}

OwnedCudaEvent& OwnedCudaEvent::operator=(OwnedCudaEvent&& other) noexcept {
  std::swap(device_, other.device_);
  std::swap(event_, other.event_);
  return *this;
}

OwnedCudaEvent::~OwnedCudaEvent() {
  if (event_ == nullptr) return;
  if (cudaSetDevice(device_) != cudaSuccess ||
      cudaEventDestroy(event_) != cudaSuccess) {
    cudaGetLastError();
  }
}

absl::StatusOr<PinnedHostBuffer> PinnedHostBuffer::Create(int64_t floats) {
  PinnedHostBuffer b;
  if (floats <= 0) return b;
  void* p = nullptr;
  RS_CHECK_CUDA(
      cudaHostAlloc(&p, floats * sizeof(float), cudaHostAllocDefault));
  std::memset(p, 0, floats * sizeof(float));
  b.data_ = static_cast<float*>(p);
  b.size_ = floats;
  return b;
}

PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

PinnedHostBuffer& PinnedHostBuffer::operator=(
    PinnedHostBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (data_ != nullptr && cudaFreeHost(data_) != cudaSuccess) {
    cudaGetLastError();
  }
}

absl::Status RecordEvent(CudaEvent event, CudaStream stream) {
  RS_CHECK_CUDA(cudaEventRecord(event, stream));
  return absl::OkStatus();
}

absl::Status WaitForEvent(CudaEvent event) {
  RS_CHECK_CUDA(cudaEventSynchronize(event));
  return absl::OkStatus();
}

absl::StatusOr<bool> EventCompleted(CudaEvent event) {
  const cudaError_t e = cudaEventQuery(event);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it
    return false;
  }
  RS_CHECK_CUDA(e);
  return true;
}

absl::Status StreamWaitEvent(CudaStream stream, CudaEvent event) {
  RS_CHECK_CUDA(cudaStreamWaitEvent(stream, event, 0));
  return absl::OkStatus();
}

absl::Status SynchronizeStream(CudaStream stream) {
  RS_CHECK_CUDA(cudaStreamSynchronize(stream));
  return absl::OkStatus();
}

absl::StatusOr<double> EventSeconds(CudaEvent start, CudaEvent stop) {
  float ms = 0.0f;
  RS_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  return ms / 1e3;
}

absl::Status CopyAsync(float* dst, const float* src, int64_t floats,
                       CudaStream stream) {
  if (floats == 0) return absl::OkStatus();
  RS_CHECK_CUDA(cudaMemcpyAsync(dst, src, floats * sizeof(float),
                                cudaMemcpyDefault, stream));
  return absl::OkStatus();
}

#undef RS_CHECK_CUDA

}  // namespace ringside
