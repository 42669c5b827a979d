#include "worker/nvml_sampler.h"

#include <dlfcn.h>

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ringside {
namespace {

// The few NVML declarations we need (nvml.h, which the CUDA toolkit here
// does not ship): an nvmlReturn_t is an int, 0 = NVML_SUCCESS.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};

}  // namespace

struct NvmlSampler::Api {
  void* library = nullptr;
  bool initialized = false;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlDevice device = nullptr;

  ~Api() {
    if (initialized) shutdown();
    if (library != nullptr) dlclose(library);
  }

  std::string Error(const char* call, NvmlReturn r) const {
    return absl::StrCat(call, ": NVML error ", r, ": ",
                        error_string != nullptr ? error_string(r) : "?");
  }
};

absl::StatusOr<std::unique_ptr<NvmlSampler>> NvmlSampler::Start(
    const std::string& pci_bus_id, absl::Duration period) {
  auto api = std::make_unique<Api>();
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) {
    const char* why = dlerror();
    return absl::NotFoundError(absl::StrCat(
        "NVML not available: ", why != nullptr ? why : "dlopen failed"));
  }
  auto load = [&](const char* name, auto* fn) -> bool {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(
        dlsym(api->library, name));
    return *fn != nullptr;
  };
  if (!load("nvmlInit_v2", &api->init) ||
      !load("nvmlShutdown", &api->shutdown) ||
      !load("nvmlDeviceGetHandleByPciBusId_v2", &api->by_bus_id) ||
      !load("nvmlDeviceGetUtilizationRates", &api->utilization) ||
      !load("nvmlErrorString", &api->error_string)) {
    return absl::NotFoundError(
        "NVML not available: libnvidia-ml.so.1 lacks a needed symbol");
  }
  if (NvmlReturn r = api->init(); r != 0) {
    return absl::UnavailableError(api->Error("nvmlInit_v2", r));
  }
  api->initialized = true;
  if (NvmlReturn r = api->by_bus_id(pci_bus_id.c_str(), &api->device); r != 0) {
    return absl::UnavailableError(api->Error(
        absl::StrCat("nvmlDeviceGetHandleByPciBusId_v2(", pci_bus_id, ")")
            .c_str(),
        r));
  }
  std::unique_ptr<NvmlSampler> sampler(new NvmlSampler);
  sampler->api_ = std::move(api);
  sampler->thread_ =
      std::thread([s = sampler.get(), period] { s->Loop(period); });
  return sampler;
}

NvmlSampler::~NvmlSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void NvmlSampler::Loop(absl::Duration period) {
  while (!stop_) {
    NvmlUtilization u{};
    if (api_->utilization(api_->device, &u) == 0) {
      sum_ += u.gpu / 100.0;
      ++samples_;
    }
    absl::SleepFor(period);
  }
}

absl::StatusOr<double> NvmlSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (samples_ == 0) {
    return absl::NotFoundError("NVML gave no utilization sample");
  }
  return sum_ / samples_;
}

}  // namespace ringside
