// MappedDeviceBuffer with CUDA's virtual memory management (--config=cuda).
#include "device/mapped_device_buffer.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"
#include "device/page_refcounts.h"

namespace ringside {
namespace {

// The driver functions used here, from the runtime's entry points.
struct Driver {
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetAttribute_v2000 attribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
};

template <typename Fn>
absl::Status Load(const char* symbol, Fn* fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  RS_CUDA_RETURN_IF_ERROR(cudaGetDriverEntryPointByVersion(
      symbol, &p, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || p == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("the CUDA driver has no ", symbol));
  }
  *fn = reinterpret_cast<Fn>(p);
  return absl::OkStatus();
}

absl::StatusOr<const Driver*> LoadDriver() {
  static const absl::StatusOr<Driver>* loaded =
      new absl::StatusOr<Driver>([]() -> absl::StatusOr<Driver> {
        Driver d;
        RS_RETURN_IF_ERROR(Load("cuGetErrorName", &d.error_name));
        RS_RETURN_IF_ERROR(Load("cuDeviceGet", &d.device_get));
        RS_RETURN_IF_ERROR(Load("cuDeviceGetAttribute", &d.attribute));
        RS_RETURN_IF_ERROR(
            Load("cuMemGetAllocationGranularity", &d.granularity));
        RS_RETURN_IF_ERROR(Load("cuMemAddressReserve", &d.reserve));
        RS_RETURN_IF_ERROR(Load("cuMemAddressFree", &d.address_free));
        RS_RETURN_IF_ERROR(Load("cuMemCreate", &d.create));
        RS_RETURN_IF_ERROR(Load("cuMemRelease", &d.release));
        RS_RETURN_IF_ERROR(Load("cuMemMap", &d.map));
        RS_RETURN_IF_ERROR(Load("cuMemUnmap", &d.unmap));
        RS_RETURN_IF_ERROR(Load("cuMemSetAccess", &d.set_access));
        return d;
      }());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

absl::Status DriverStatus(const Driver& d, CUresult result,
                          absl::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = "unknown CUDA driver error";
  d.error_name(result, &name);
  const absl::StatusCode code = result == CUDA_ERROR_OUT_OF_MEMORY
                                    ? absl::StatusCode::kResourceExhausted
                                    : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat(what, ": ", name));
}

class CudaMappedDeviceBuffer final : public MappedDeviceBuffer {
 public:
  CudaMappedDeviceBuffer(const Driver& driver, int device, CUdevice cu_device,
                         size_t floats, size_t page_bytes)
      : driver_(driver),
        device_(device),
        cu_device_(cu_device),
        floats_(floats),
        counts_(floats * sizeof(float), page_bytes),
        handles_(counts_.num_pages(), 0) {}

  ~CudaMappedDeviceBuffer() override {
    // Errors here have no one to go to.
    if (cudaSetDevice(device_) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      cudaGetLastError();
    }
    for (size_t p = 0; p < handles_.size(); ++p) {
      if (handles_[p] != 0) UnmapPage(p).IgnoreError();
    }
    for (Pending& pending : pending_) cudaEventDestroy(pending.event);
    for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
    if (base_ != 0) driver_.address_free(base_, reserved_bytes());
  }

  // Reserves the addresses and maps every page, held once.
  absl::Status Init() {
    RS_RETURN_IF_ERROR(DriverStatus(
        driver_, driver_.reserve(&base_, reserved_bytes(), page_bytes(), 0, 0),
        absl::StrCat("cuMemAddressReserve of ", reserved_bytes(), " bytes")));
    return Hold(0, floats_);
  }

  float* data() const override { return reinterpret_cast<float*>(base_); }
  size_t size() const override { return floats_; }
  size_t page_bytes() const override { return counts_.page_bytes(); }

  absl::Status Hold(size_t begin, size_t end) override {
    std::lock_guard<std::mutex> lock(mu_);
    RS_RETURN_IF_ERROR(CollectLocked());
    RS_ASSIGN_OR_RETURN(std::vector<PageRun> fresh,
                        counts_.Hold(begin * sizeof(float),
                                     end * sizeof(float)));
    for (const PageRun& run : fresh) {
      for (size_t p = run.first; p < run.first + run.count; ++p) {
        if (handles_[p] == 0) RS_RETURN_IF_ERROR(MapPage(p));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Drop(size_t begin, size_t end, CudaStream after) override {
    std::lock_guard<std::mutex> lock(mu_);
    RS_ASSIGN_OR_RETURN(std::vector<PageRun> freed,
                        counts_.Drop(begin * sizeof(float),
                                     end * sizeof(float)));
    if (after == nullptr) {
      RS_RETURN_IF_ERROR(UnmapUnheld(freed));
    } else if (!freed.empty()) {
      cudaEvent_t event = nullptr;
      if (!spare_events_.empty()) {
        event = spare_events_.back();
        spare_events_.pop_back();
      } else {
        RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
        RS_CUDA_RETURN_IF_ERROR(
            cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      }
      if (absl::Status s = RS_CUDA_STATUS(cudaEventRecord(event, after));
          !s.ok()) {
        spare_events_.push_back(event);
        return s;
      }
      pending_.push_back(Pending{event, std::move(freed)});
    }
    return CollectLocked();
  }

  absl::Status Collect() override {
    std::lock_guard<std::mutex> lock(mu_);
    return CollectLocked();
  }

  int64_t mapped_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return mapped_bytes_;
  }
  int64_t peak_mapped_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_bytes_;
  }
  void ResetPeak() override {
    std::lock_guard<std::mutex> lock(mu_);
    peak_bytes_ = mapped_bytes_;
  }

 private:
  struct Pending {
    cudaEvent_t event;
    std::vector<PageRun> pages;
  };

  size_t reserved_bytes() const {
    return counts_.num_pages() * counts_.page_bytes();
  }
  CUdeviceptr PageAddress(size_t page) const {
    return base_ + page * counts_.page_bytes();
  }

  absl::Status MapPage(size_t page) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = cu_device_;
    CUmemGenericAllocationHandle handle = 0;
    const std::string what = absl::StrCat("page ", page, " of ",
                                          counts_.num_pages());
    RS_RETURN_IF_ERROR(DriverStatus(
        driver_, driver_.create(&handle, page_bytes(), &prop, 0),
        absl::StrCat("cuMemCreate of ", what)));
    absl::Status s = DriverStatus(
        driver_, driver_.map(PageAddress(page), page_bytes(), 0, handle, 0),
        absl::StrCat("cuMemMap of ", what));
    if (s.ok()) {
      CUmemAccessDesc access = {};
      access.location = prop.location;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      s = DriverStatus(
          driver_,
          driver_.set_access(PageAddress(page), page_bytes(), &access, 1),
          absl::StrCat("cuMemSetAccess of ", what));
      if (!s.ok()) driver_.unmap(PageAddress(page), page_bytes());
    }
    if (!s.ok()) {
      driver_.release(handle);
      return s;
    }
    handles_[page] = handle;
    mapped_bytes_ += static_cast<int64_t>(page_bytes());
    peak_bytes_ = std::max(peak_bytes_, mapped_bytes_);
    return absl::OkStatus();
  }

  absl::Status UnmapPage(size_t page) {
    const std::string what = absl::StrCat("page ", page, " of ",
                                          counts_.num_pages());
    RS_RETURN_IF_ERROR(DriverStatus(
        driver_, driver_.unmap(PageAddress(page), page_bytes()),
        absl::StrCat("cuMemUnmap of ", what)));
    RS_RETURN_IF_ERROR(
        DriverStatus(driver_, driver_.release(handles_[page]),
                     absl::StrCat("cuMemRelease of ", what)));
    handles_[page] = 0;
    mapped_bytes_ -= static_cast<int64_t>(page_bytes());
    return absl::OkStatus();
  }

  // Unmaps the pages of `runs` that are mapped and held by no one now.
  absl::Status UnmapUnheld(const std::vector<PageRun>& runs) {
    for (const PageRun& run : runs) {
      for (size_t p = run.first; p < run.first + run.count; ++p) {
        if (counts_.count(p) == 0 && handles_[p] != 0) {
          RS_RETURN_IF_ERROR(UnmapPage(p));
        }
      }
    }
    return absl::OkStatus();
  }

  // The queued drops whose events have completed, oldest first.
  absl::Status CollectLocked() {
    while (!pending_.empty()) {
      const cudaError_t done = cudaEventQuery(pending_.front().event);
      if (done == cudaErrorNotReady) return absl::OkStatus();
      RS_CUDA_RETURN_IF_ERROR(done);
      Pending pending = std::move(pending_.front());
      pending_.pop_front();
      spare_events_.push_back(pending.event);
      RS_RETURN_IF_ERROR(UnmapUnheld(pending.pages));
    }
    return absl::OkStatus();
  }

  const Driver& driver_;
  const int device_;
  const CUdevice cu_device_;
  const size_t floats_;
  mutable std::mutex mu_;
  PageRefcounts counts_;
  std::vector<CUmemGenericAllocationHandle> handles_;  // 0: not mapped
  CUdeviceptr base_ = 0;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spare_events_;
  int64_t mapped_bytes_ = 0;
  int64_t peak_bytes_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> MappedDeviceBuffer::Create(
    int device, size_t floats) {
  if (floats == 0) {
    return absl::InvalidArgumentError("MappedDeviceBuffer of 0 floats");
  }
  RS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  RS_CUDA_RETURN_IF_ERROR(cudaFree(nullptr));  // the primary context
  RS_ASSIGN_OR_RETURN(const Driver* driver, LoadDriver());
  CUdevice cu_device = 0;
  RS_RETURN_IF_ERROR(DriverStatus(*driver, driver->device_get(&cu_device,
                                                              device),
                                  absl::StrCat("cuDeviceGet(", device, ")")));
  int supported = 0;
  RS_RETURN_IF_ERROR(DriverStatus(
      *driver,
      driver->attribute(&supported,
                        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                        cu_device),
      "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)"));
  if (supported == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "CUDA device ", device, " does not support virtual memory management"));
  }
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = cu_device;
  size_t page_bytes = 0;
  RS_RETURN_IF_ERROR(DriverStatus(
      *driver,
      driver->granularity(&page_bytes, &prop,
                          CU_MEM_ALLOC_GRANULARITY_MINIMUM),
      "cuMemGetAllocationGranularity"));
  auto buffer = std::make_unique<CudaMappedDeviceBuffer>(
      *driver, device, cu_device, floats, page_bytes);
  RS_RETURN_IF_ERROR(buffer->Init());
  return buffer;
}

}  // namespace ringside
