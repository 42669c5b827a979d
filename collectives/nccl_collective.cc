// The NCCL backend proper, compiled with --config=cuda (nccl_collective.h).
#include "collectives/nccl_collective.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "collectives/nccl_rendezvous.h"
#include "common/status_macros.h"
#include "device/cuda_status.h"

namespace ringside {
namespace {

constexpr char kHostPhase[] = "host";
constexpr char kGpuPhase[] = "gpu";

absl::Status ValidateOptions(const NcclCollectiveOptions& options) {
  if (options.device < -1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NcclCollectiveOptions.device must be -1 (pick by local rank) or a "
        "CUDA device index, got ",
        options.device));
  }
  if (options.connect_timeout <= absl::ZeroDuration() ||
      options.connect_timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NcclCollectiveOptions.connect_timeout must be positive and finite, "
        "got ",
        absl::FormatDuration(options.connect_timeout)));
  }
  if (options.store_prefix.empty()) {
    return absl::InvalidArgumentError(
        "NcclCollectiveOptions.store_prefix must not be empty");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) {
    return absl::InternalError(
        absl::StrCat("gethostname: ", std::strerror(errno)));
  }
  return std::string(name);
}

// The device this rank uses and its PCI bus id ("0000:3b:00.0").
absl::StatusOr<std::pair<int, std::string>> ChooseGpu(int requested,
                                                      const LocalRank& local,
                                                      int device_count) {
  if (requested >= device_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NcclCollectiveOptions.device is ", requested,
        " but this process sees ", device_count, " CUDA device(s)"));
  }
  const int device = requested >= 0 ? requested : local.rank % device_count;
  char bus_id[64] = {};
  RS_RETURN_IF_ERROR(RS_CUDA_STATUS(
      cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, device)));
  return std::make_pair(device, std::string(bus_id));
}

// Between polls: spin briefly (NCCL calls often finish in microseconds),
// then sleep, longer as the wait grows.
void Backoff(absl::Duration waited) {
  if (waited < absl::Milliseconds(1)) {
    std::this_thread::yield();
  } else if (waited < absl::Milliseconds(100)) {
    absl::SleepFor(absl::Microseconds(20));
  } else {
    absl::SleepFor(absl::Milliseconds(1));
  }
}

// Inside NcclCollective: the status of an enqueueing NCCL call, where
// ncclInProgress (a non-blocking communicator still enqueueing) is not an
// error: Complete polls it.
#define RS_NCCL_ENQUEUE(call) Enqueued((call), #call, __LINE__)

class NcclCollective final : public Collective {
 public:
  NcclCollective(int rank, int size, int device)
      : rank_(rank), size_(size), device_(device) {}
  NcclCollective(const NcclCollective&) = delete;
  NcclCollective& operator=(const NcclCollective&) = delete;

  ~NcclCollective() override {
    cudaSetDevice(device_);
    // Every call waited for its work, so nothing is in flight: a local,
    // non-collective destroy. (A failed group was aborted already.)
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (scratch_ != nullptr) cudaFree(scratch_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Creates the stream, the barrier's scratch float and the communicator,
  // polling NCCL's non-blocking initialization until `deadline`.
  absl::Status Init(const ncclUniqueId& id, absl::Time deadline,
                    absl::Duration timeout) {
    RS_RETURN_IF_ERROR(RS_CUDA_STATUS(cudaSetDevice(device_)));
    // A blocking stream: it orders after the legacy default stream.
    RS_RETURN_IF_ERROR(RS_CUDA_STATUS(cudaStreamCreate(&stream_)));
    void* scratch = nullptr;
    RS_RETURN_IF_ERROR(RS_CUDA_STATUS(cudaMalloc(&scratch, sizeof(float))));
    scratch_ = static_cast<float*>(scratch);
    RS_RETURN_IF_ERROR(RS_CUDA_STATUS(cudaMemset(scratch_, 0, sizeof(float))));

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t started =
        ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
    if (started != ncclSuccess && started != ncclInProgress) {
      return Break(NcclStatus(started, "ncclCommInitRankConfig", __FILE__,
                              __LINE__, comm_));
    }
    if (comm_ == nullptr) {
      return absl::InternalError(
          "ncclCommInitRankConfig returned no communicator");
    }
    const absl::Time start = absl::Now();
    for (;;) {
      ncclResult_t state = ncclInProgress;
      const ncclResult_t polled = ncclCommGetAsyncError(comm_, &state);
      if (polled != ncclSuccess) {
        return Break(NcclStatus(polled, "ncclCommGetAsyncError", __FILE__,
                                __LINE__, comm_));
      }
      if (state == ncclSuccess) return absl::OkStatus();
      if (state != ncclInProgress) {
        return Break(NcclStatus(state, "ncclCommInitRankConfig (asynchronous)",
                                __FILE__, __LINE__, comm_));
      }
      const absl::Time now = absl::Now();
      if (now >= deadline) {
        return Break(absl::DeadlineExceededError(absl::StrCat(
            "ncclCommInitRank (device ", device_,
            ") did not complete within the connect timeout of ",
            absl::FormatDuration(timeout),
            " (a rank may have died after the rendezvous); the communicator "
            "was aborted")));
      }
      Backoff(now - start);
    }
  }

  std::string backend() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool Supports(Device device) const override {
    return device == Device::kCuda;
  }

  absl::Status AllReduce(absl::Span<float> data, ReduceOp op,
                         absl::Duration timeout) override {
    const std::string what = Describe("AllReduce", data.size(), timeout);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    if (data.empty()) return absl::OkStatus();
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "data", data.data()));
    const ncclRedOp_t nccl_op = op == ReduceOp::kSum ? ncclSum : ncclAvg;
    return Complete(
        what, timeout,
        RS_NCCL_ENQUEUE(ncclAllReduce(data.data(), data.data(), data.size(),
                                      ncclFloat32, nccl_op, comm_, stream_)));
  }

  absl::Status Broadcast(absl::Span<float> data, int root,
                         absl::Duration timeout) override {
    const std::string what = absl::StrCat(
        Describe("Broadcast", data.size(), timeout), " from root ", root);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    if (root < 0 || root >= size_) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": root must be in [0, ", size_, ")"));
    }
    if (data.empty()) return absl::OkStatus();
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "data", data.data()));
    return Complete(
        what, timeout,
        RS_NCCL_ENQUEUE(ncclBroadcast(data.data(), data.data(), data.size(),
                                      ncclFloat32, root, comm_, stream_)));
  }

  absl::Status AllGather(absl::Span<const float> in, absl::Span<float> out,
                         absl::Duration timeout) override {
    const std::string what = Describe("AllGather", in.size(), timeout);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    if (out.size() != in.size() * static_cast<size_t>(size_)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": out has ", out.size(), " floats, expected ",
                       size_, " x ", in.size()));
    }
    if (in.empty()) return absl::OkStatus();
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "in", in.data()));
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "out", out.data()));
    // NCCL gathers in place when `in` is this rank's slice of `out`.
    return Complete(
        what, timeout,
        RS_NCCL_ENQUEUE(ncclAllGather(in.data(), out.data(), in.size(),
                                      ncclFloat32, comm_, stream_)));
  }

  // Equal shards: ncclReduceScatter in place. Uneven ones (which it cannot
  // take): one ncclReduce per shard to its owner, in one NCCL group.
  absl::Status ReduceScatter(absl::Span<float> data,
                             absl::Span<const int64_t> counts, ReduceOp op,
                             absl::Duration timeout) override {
    const std::string what = Describe("ReduceScatter", data.size(), timeout);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    RS_RETURN_IF_ERROR(CheckShardCounts(what, size_, counts, data.size()));
    if (data.empty()) return absl::OkStatus();
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "data", data.data()));
    const ncclRedOp_t nccl_op = op == ReduceOp::kSum ? ncclSum : ncclAvg;
    if (Equal(counts)) {
      return Complete(what, timeout,
                      RS_NCCL_ENQUEUE(ncclReduceScatter(
                          data.data(), data.data() + rank_ * counts[0],
                          counts[0], ncclFloat32, nccl_op, comm_, stream_)));
    }
    return Complete(what, timeout, Grouped(counts, [&](int i, float* shard) {
                      return RS_NCCL_ENQUEUE(
                          ncclReduce(shard, shard, counts[i], ncclFloat32,
                                     nccl_op, i, comm_, stream_));
                    }, data.data()));
  }

  // Equal shards: ncclAllGather in place; uneven: one ncclBroadcast per
  // shard from its owner, in one NCCL group.
  absl::Status AllGatherV(absl::Span<float> data,
                          absl::Span<const int64_t> counts,
                          absl::Duration timeout) override {
    const std::string what = Describe("AllGatherV", data.size(), timeout);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    RS_RETURN_IF_ERROR(CheckShardCounts(what, size_, counts, data.size()));
    if (data.empty()) return absl::OkStatus();
    RS_RETURN_IF_ERROR(CheckOnDevice(what, "data", data.data()));
    if (Equal(counts)) {
      return Complete(
          what, timeout,
          RS_NCCL_ENQUEUE(ncclAllGather(data.data() + rank_ * counts[0],
                                        data.data(), counts[0], ncclFloat32,
                                        comm_, stream_)));
    }
    return Complete(what, timeout, Grouped(counts, [&](int i, float* shard) {
                      return RS_NCCL_ENQUEUE(
                          ncclBroadcast(shard, shard, counts[i], ncclFloat32,
                                        i, comm_, stream_));
                    }, data.data()));
  }

  absl::Status Barrier(absl::Duration timeout) override {
    const std::string what = Describe("Barrier", 0, timeout);
    RS_RETURN_IF_ERROR(Begin(what, timeout));
    // A one-float all-reduce of zeros: done only when every rank joined.
    return Complete(
        what, timeout,
        RS_NCCL_ENQUEUE(ncclAllReduce(scratch_, scratch_, 1, ncclFloat32,
                                      ncclSum, comm_, stream_)));
  }

 private:
  static bool Equal(absl::Span<const int64_t> counts) {
    for (int64_t c : counts) {
      if (c != counts[0]) return false;
    }
    return true;
  }

  // Enqueues `call(i, shard i)` for every non-empty shard between
  // ncclGroupStart and ncclGroupEnd (always ended); the first error.
  template <typename Call>
  absl::Status Grouped(absl::Span<const int64_t> counts, Call call,
                       float* data) {
    absl::Status enqueued = RS_NCCL_ENQUEUE(ncclGroupStart());
    if (!enqueued.ok()) return enqueued;
    int64_t offset = 0;
    for (int i = 0; i < size_; ++i) {
      if (counts[i] > 0 && enqueued.ok()) enqueued = call(i, data + offset);
      offset += counts[i];
    }
    const absl::Status ended = RS_NCCL_ENQUEUE(ncclGroupEnd());
    return enqueued.ok() ? ended : enqueued;
  }

  absl::Status Enqueued(ncclResult_t result, const char* call, int line) {
    if (result == ncclSuccess || result == ncclInProgress) {
      return absl::OkStatus();
    }
    return NcclStatus(result, call, __FILE__, line, comm_);
  }

  std::string Describe(absl::string_view op, size_t floats,
                       absl::Duration timeout) const {
    return absl::StrCat(op, " (nccl, rank ", rank_, " of ", size_, ", device ",
                        device_, ", ", floats, " floats, timeout ",
                        absl::FormatDuration(timeout), ")");
  }

  // Usable group, valid timeout, this group's device current.
  absl::Status Begin(absl::string_view what, absl::Duration timeout) {
    if (!broken_.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          what,
          ": group unusable after an earlier error: ", broken_.message()));
    }
    if (timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": timeout must be positive, got ",
                       absl::FormatDuration(timeout)));
    }
    return Annotate(RS_CUDA_STATUS(cudaSetDevice(device_)), what);
  }

  // INVALID_ARGUMENT unless `p` is device memory of this group's device (or
  // managed memory). Host memory would crash the NCCL kernels.
  absl::Status CheckOnDevice(absl::string_view what, absl::string_view name,
                             const void* p) const {
    cudaPointerAttributes attributes;
    const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
    if (error != cudaSuccess) {
      cudaGetLastError();  // not sticky; clear it
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", name, " is not CUDA memory: ",
          CudaStatus(error, "cudaPointerGetAttributes", __FILE__, __LINE__)
              .message()));
    }
    if (attributes.type == cudaMemoryTypeManaged) return absl::OkStatus();
    if (attributes.type != cudaMemoryTypeDevice) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", name,
          " is host memory; the NCCL backend takes CUDA device memory only "
          "(Supports(Device::kCpu) is false)"));
    }
    if (attributes.device != device_) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", name, " is memory of CUDA device ", attributes.device,
          ", this rank's group uses device ", device_));
    }
    return absl::OkStatus();
  }

  // Waits until the enqueued work is done: NCCL's asynchronous state has
  // left ncclInProgress without error and the stream has drained. Polls
  // until `timeout`, then aborts the communicator.
  absl::Status Complete(absl::string_view what, absl::Duration timeout,
                        absl::Status enqueued) {
    if (!enqueued.ok()) return Break(Annotate(enqueued, what));
    const absl::Time start = absl::Now();
    const absl::Time deadline = timeout == absl::InfiniteDuration()
                                    ? absl::InfiniteFuture()
                                    : start + timeout;
    for (;;) {
      ncclResult_t state = ncclInProgress;
      const ncclResult_t polled = ncclCommGetAsyncError(comm_, &state);
      if (polled != ncclSuccess) {
        return Break(Annotate(NcclStatus(polled, "ncclCommGetAsyncError",
                                         __FILE__, __LINE__, comm_),
                              what));
      }
      if (state != ncclSuccess && state != ncclInProgress) {
        return Break(Annotate(
            NcclStatus(state, "asynchronous NCCL error (ncclCommGetAsyncError)",
                       __FILE__, __LINE__, comm_),
            what));
      }
      if (state == ncclSuccess) {
        const cudaError_t queried = cudaStreamQuery(stream_);
        if (queried == cudaSuccess) return absl::OkStatus();
        if (queried != cudaErrorNotReady) {
          return Break(Annotate(
              CudaStatus(queried, "cudaStreamQuery", __FILE__, __LINE__),
              what));
        }
      }
      const absl::Time now = absl::Now();
      if (now >= deadline) {
        return Break(absl::DeadlineExceededError(absl::StrCat(
            what, ": not complete after ", absl::FormatDuration(now - start),
            " (a rank may have skipped this call or died); the communicator "
            "was aborted")));
      }
      Backoff(now - start);
    }
  }

  // Records the first error, aborts the communicator (NCCL's rule after any
  // error) and returns `s`.
  absl::Status Break(absl::Status s) {
    if (broken_.ok()) broken_ = s;
    if (comm_ != nullptr) {
      ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    return s;
  }

  const int rank_;
  const int size_;
  const int device_;
  cudaStream_t stream_ = nullptr;
  float* scratch_ = nullptr;
  ncclComm_t comm_ = nullptr;
  absl::Status broken_;
};

#undef RS_NCCL_ENQUEUE

}  // namespace

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear it for later calls
    return absl::UnavailableError(absl::StrCat(
        "no GPU here: ",
        CudaStatus(error, "cudaGetDeviceCount", __FILE__, __LINE__).message()));
  }
  if (count == 0) {
    return absl::UnavailableError(
        "no GPU here: cudaGetDeviceCount found 0 CUDA devices");
  }
  return count;
}

absl::StatusOr<std::unique_ptr<Collective>> CreateNcclCollective(
    Store& store, int rank, int size, const NcclCollectiveOptions& options) {
  RS_RETURN_IF_ERROR(ValidateOptions(options));
  if (size < 1 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("CreateNcclCollective: need 0 <= rank < size, got rank ",
                     rank, ", size ", size));
  }
  NcclRendezvous rendezvous(store, options.store_prefix, rank, size,
                            options.connect_timeout);

  // Join with the host name; a rank that cannot take part says why.
  absl::StatusOr<int> device_count = CudaDeviceCount();
  if (!device_count.ok()) {
    return rendezvous.Fail(kHostPhase, device_count.status());
  }
  absl::StatusOr<std::string> host = HostName();
  if (!host.ok()) return rendezvous.Fail(kHostPhase, host.status());
  RS_ASSIGN_OR_RETURN(const std::vector<std::string> hosts,
                      rendezvous.Exchange(kHostPhase, "join", *host));

  // One GPU per rank: pick by local rank, then check across the group.
  absl::StatusOr<std::pair<int, std::string>> gpu =
      ChooseGpu(options.device, LocalRankOf(hosts, rank), *device_count);
  if (!gpu.ok()) return rendezvous.Fail(kGpuPhase, gpu.status());
  const int device = gpu->first;
  RS_ASSIGN_OR_RETURN(
      const std::vector<std::string> gpus,
      rendezvous.Exchange(kGpuPhase, "report its GPU", gpu->second));
  RS_RETURN_IF_ERROR(
      Annotate(CheckDistinctGpus(hosts, gpus), rendezvous.where()));

  // Rank 0 makes the NCCL unique id; the others read it.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (rank == 0) {
    const absl::Status made = RS_NCCL_STATUS(ncclGetUniqueId(&id), nullptr);
    if (!made.ok()) {
      return rendezvous.Fail(NcclRendezvous::kUniqueIdPhase, made);
    }
    RS_RETURN_IF_ERROR(rendezvous.PublishUniqueId(
        absl::string_view(id.internal, sizeof(id.internal))));
  } else {
    RS_ASSIGN_OR_RETURN(const std::string bytes,
                        rendezvous.FetchUniqueId(sizeof(id.internal)));
    std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  }

  auto collective = std::make_unique<NcclCollective>(rank, size, device);
  RS_RETURN_IF_ERROR(Annotate(
      collective->Init(id, rendezvous.deadline(), options.connect_timeout),
      rendezvous.where()));
  return std::unique_ptr<Collective>(std::move(collective));
}

}  // namespace ringside
