// NCCL backend of Collective: all-reduce (sum/average), broadcast,
// all-gather and barrier over NCCL on CUDA device memory, for one group of
// ranks, one GPU per rank, that meet through a Store (which carries the host
// names, GPU bus ids and NCCL unique id; see nccl_rendezvous.h).
//
// Built with --config=cuda this is the real backend (nccl_collective.cc);
// without it the library still links, and CreateNcclCollective and
// CudaDeviceCount return UNIMPLEMENTED("built without --config=cuda"), so
// CPU hosts skip NCCL cleanly (Supports(kCuda) decides, as in Horovod).
//
// Creation is collective and blocking: every rank of the group calls
// CreateNcclCollective with the same size and store prefix. It is bounded by
// options.connect_timeout throughout: the Store exchanges, then NCCL's
// communicator set-up, which runs non-blocking (ncclConfig_t.blocking = 0)
// and is polled until the deadline, then aborted (ncclCommAbort).
//
// The returned Collective follows collective.h. Spans are CUDA device
// memory on this rank's device (Supports(kCuda) true, kCpu false); a host
// pointer or another device's memory is INVALID_ARGUMENT. Each call enqueues
// NCCL on the group's own CUDA stream, then polls the stream and NCCL's
// asynchronous error until the work is done (the data is then final) or the
// timeout passes: the communicator is aborted and the call returns
// DEADLINE_EXCEEDED naming the operation. An infinite timeout waits forever.
// After any error the group is unusable: later calls fail with
// FAILED_PRECONDITION. Input must be ready when a call starts: the group's
// stream orders after work on the legacy default stream, not after other
// streams the caller writes the data on (synchronize those first). Creation,
// every call and destruction make the group's device the calling thread's
// current CUDA device (cudaSetDevice) and leave it so.
//
// Thread-safety: CreateNcclCollective may run concurrently for different
// ranks (tests run one thread per rank and GPU); one Collective is not
// thread-safe. Destruction releases the communicator (ncclCommDestroy; it
// does not wait for the other ranks), the stream and the scratch memory.
#ifndef RINGSIDE_COLLECTIVES_NCCL_COLLECTIVE_H_
#define RINGSIDE_COLLECTIVES_NCCL_COLLECTIVE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collective.h"
#include "collectives/store.h"

namespace ringside {

struct NcclCollectiveOptions {
  // CUDA device (index among this process's visible devices) this rank
  // uses. -1 picks the rank's local rank (its position among the group's
  // ranks on this host, learned through the Store) modulo the device count,
  // i.e. one GPU per rank in launch order. Default -1.
  int device = -1;
  // Bound on the whole creation: the Store exchanges and NCCL's
  // communicator initialization. Positive and finite. Default 30 s.
  absl::Duration connect_timeout = absl::Seconds(30);
  // Store key prefix of this group; groups sharing a store need distinct
  // prefixes, and a prefix is used by one group only once. Default "nccl".
  std::string store_prefix = "nccl";
};

// Number of CUDA devices this process can use. UNAVAILABLE("no GPU here:
// ...") with the runtime's own message when there is none or the driver is
// missing or too old ("CUDA driver version is insufficient for CUDA runtime
// version" on GPU-less machines); UNIMPLEMENTED without --config=cuda.
// Blocking (initializes the CUDA runtime on first use); thread-safe.
absl::StatusOr<int> CudaDeviceCount();

// Connects rank `rank` of a `size`-rank NCCL group through `store` (not
// owned; used only during this call). Blocks until the communicator is up
// or `options.connect_timeout` passes: DEADLINE_EXCEEDED naming the ranks
// that did not show up (rank 0 when the NCCL unique id never came), or
// naming ncclCommInitRank. Errors: INVALID_ARGUMENT on bad rank, size or
// options; UNAVAILABLE "no GPU here" (see CudaDeviceCount);
// FAILED_PRECONDITION "NCCL needs a distinct GPU per rank: N ranks, M GPUs
// ..." when two ranks on one host would share a GPU (e.g. more ranks than
// GPUs on a single host); ABORTED when a peer failed during the rendezvous;
// CUDA/NCCL errors with file:line and the library's message
// (device/cuda_status.h).
absl::StatusOr<std::unique_ptr<Collective>> CreateNcclCollective(
    Store& store, int rank, int size, const NcclCollectiveOptions& options);

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_NCCL_COLLECTIVE_H_
