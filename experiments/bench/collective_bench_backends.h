// The all-reduce backends collective_bench sweeps, each an AllReduceBackend
// (collective_bench_harness.h):
//
//   ours  our Collective (CreateGlooCollective, Gloo ring) with N ranks as
//         threads of this process meeting over an InMemoryStore;
//   gloo  raw Gloo, the reference peer: gloo::rendezvous::Context over a
//         HashStore, TCP device, gloo::allreduce with the RING algorithm,
//         also N threads of this process;
//   mpi   Open MPI's MPI_Allreduce: `mpirun -np N mpi_allreduce_peer
//         --sizes=...` children that run the harness's per-rank loop and
//         print one JSON line per size, parsed here.
//
// Extension point: MakeBackend is the one list of backends. A CUDA build
// adds "nccl" there (CreateNcclCollective from collectives/nccl_collective.h
// behind a RankComm whose Upload/Download copy to and from device memory);
// nothing else in the harness or the binary changes.
//
// Thread-safety: the factories are thread-safe; see the harness for how a
// backend is driven.
#ifndef RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_BACKENDS_H_
#define RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_BACKENDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collective.h"
#include "collectives/gloo_loop_pacing.h"
#include "collectives/store.h"
#include "experiments/bench/collective_bench_harness.h"

namespace ringside {

struct BenchBackendOptions {
  // Address the Gloo TCP transports bind (ours, gloo). Default loopback.
  std::string host = "127.0.0.1";
  // How the Gloo backends' event loops are scheduled, the same for ours and
  // raw Gloo so that the reference runs on equal terms
  // (collectives/gloo_loop_pacing.h; kNormal is how PyTorch runs Gloo).
  GlooEventLoop gloo_event_loop = GlooEventLoop::kPaced;
  // Bound on each rank's rendezvous (ours, gloo). Default 60 s.
  absl::Duration connect_timeout = absl::Seconds(60);
  // Bound on one all-reduce or barrier (ours, gloo). Default 300 s.
  absl::Duration op_timeout = absl::Seconds(300);
  // mpirun to launch (path or name on $PATH). Default "mpirun".
  std::string mpirun = "mpirun";
  // Extra mpirun arguments placed before the program, e.g. "--bind-to",
  // "none". Default none.
  std::vector<std::string> mpirun_args;
  // Path of the mpi_allreduce_peer binary; empty: the mpi backend reports
  // itself unavailable. Default "".
  std::string mpi_peer;
  // Wall-time bound on the whole mpirun sweep (ProcessGroup deadline).
  // Default 20 min.
  absl::Duration mpi_deadline = absl::Minutes(20);
};

// Backend names in the default order of the tables.
std::vector<std::string> KnownBackendNames();

// The backend called `name` (one of KnownBackendNames()); INVALID_ARGUMENT
// naming the known ones otherwise.
absl::StatusOr<AllReduceBackend> MakeBackend(
    const std::string& name, const BenchBackendOptions& options);

// Any host-memory Collective as a backend: `create` connects rank `rank`
// of `ranks` through a Store shared by the ranks of one sweep (a fresh
// InMemoryStore per sweep); AllReduce and Barrier use options.op_timeout.
using CollectiveFactory =
    std::function<absl::StatusOr<std::unique_ptr<Collective>>(
        Store& store, int rank, int ranks)>;
AllReduceBackend MakeCollectiveBackend(std::string name,
                                       std::string description,
                                       CollectiveFactory create,
                                       const BenchBackendOptions& options);

AllReduceBackend MakeOursBackend(const BenchBackendOptions& options);
AllReduceBackend MakeRawGlooBackend(const BenchBackendOptions& options);
AllReduceBackend MakeMpiBackend(const BenchBackendOptions& options);

// The mpirun command line for `ranks` ranks and `plan`.
std::vector<std::string> MpirunArgv(const BenchBackendOptions& options,
                                    int ranks,
                                    const std::vector<SizePlan>& plan);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_BACKENDS_H_
