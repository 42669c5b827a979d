// NvmlSampler: GPU utilization sampled through NVML, to cross-check the
// CUDA-event utilization of a CUDA worker. NVML is loaded at run time
// (dlopen "libnvidia-ml.so.1", which comes with the NVIDIA driver), so the
// binary neither links nor needs it: where it is missing, Start says so and
// the worker's record simply has no "nvml_utilization".
//
// A background thread reads nvmlDeviceGetUtilizationRates(...).gpu -- the
// percentage of the driver's last sample period (1/6 s to 1 s, by GPU) in
// which one or more kernels ran on the device -- every `period` until
// Stop(). It counts every process on that GPU, and its periods do not align
// with our steps: a coarse check, not the measure.
//
// Thread-safety: Start/Stop/destructor from one thread.
#ifndef RINGSIDE_WORKER_NVML_SAMPLER_H_
#define RINGSIDE_WORKER_NVML_SAMPLER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringside {

class NvmlSampler {
 public:
  // Loads NVML, finds the GPU with PCI bus id `pci_bus_id` (as
  // cudaDeviceGetPCIBusId writes it) and starts sampling. NOT_FOUND when
  // libnvidia-ml.so.1 cannot be loaded or lacks a symbol; UNAVAILABLE with
  // NVML's message when NVML fails. Blocking (briefly).
  static absl::StatusOr<std::unique_ptr<NvmlSampler>> Start(
      const std::string& pci_bus_id,
      absl::Duration period = absl::Milliseconds(20));
  ~NvmlSampler();  // stops; shuts NVML down

  // Stops sampling; the mean utilization in [0, 1] over the samples taken.
  // NOT_FOUND when none succeeded. Blocking (joins the thread).
  absl::StatusOr<double> Stop();

 private:
  struct Api;
  NvmlSampler() = default;
  void Loop(absl::Duration period);

  std::unique_ptr<Api> api_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // Written by the sampling thread, read after it is joined.
  double sum_ = 0.0;
  int64_t samples_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_NVML_SAMPLER_H_
