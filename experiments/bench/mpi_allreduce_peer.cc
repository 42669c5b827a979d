// mpi_allreduce_peer: the MPI side of collective_bench. Started by mpirun
// (one process per rank), it runs the harness's per-rank loop
// (MeasureOnRank: warm-up, barrier, timed iterations, checked all-reduce)
// over MPI_Allreduce(MPI_IN_PLACE, ..., MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)
// for each size of the plan, reduces the ranks' results (max of the mean
// times, sum of the wrong elements) to rank 0, and rank 0 prints one JSON
// line per size (SizeLineJson) on stdout.
//
//   mpirun -np 2 mpi_allreduce_peer --sizes=4096,16384 --iters=20,20
//       --warmup_iters=5,5
//
// Errors: MPI calls return codes (MPI_ERRORS_RETURN) that become a status;
// the failing rank prints it on stderr and aborts the job.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "experiments/bench/collective_bench_harness.h"

ABSL_FLAG(std::vector<std::string>, sizes, {},
          "Message sizes in bytes, one per sweep step.");
ABSL_FLAG(std::vector<std::string>, iters, {},
          "Timed iterations, one per size.");
ABSL_FLAG(std::vector<std::string>, warmup_iters, {},
          "Warm-up iterations, one per size.");

namespace ringside {
namespace {

absl::Status MpiStatus(const char* what, int code) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return absl::InternalError(
      absl::StrCat(what, " failed: ", std::string(text, len)));
}

class MpiRankComm final : public HostRankComm {
 public:
  absl::Status Barrier() override {
    return MpiStatus("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
  }

 protected:
  absl::Status AllReduceInPlace(absl::Span<float> data) override {
    if (data.size() > static_cast<size_t>(INT32_MAX)) {
      return absl::InvalidArgumentError("MPI count must fit in an int");
    }
    return MpiStatus(
        "MPI_Allreduce",
        MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()),
                      MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  }
};

absl::Status Run(int rank, int ranks) {
  absl::StatusOr<std::vector<SizePlan>> plan =
      PlanFromLists(absl::GetFlag(FLAGS_sizes), absl::GetFlag(FLAGS_iters),
                    absl::GetFlag(FLAGS_warmup_iters));
  if (!plan.ok()) return plan.status();
  MpiRankComm comm;
  std::vector<float> scratch;
  for (const SizePlan& p : *plan) {
    absl::StatusOr<RankMeasurement> mine =
        MeasureOnRank(comm, rank, ranks, p, scratch);
    if (!mine.ok()) return mine.status();
    double seconds = 0;
    long long wrong = 0;
    const long long my_wrong = mine->wrong;
    absl::Status s = MpiStatus(
        "MPI_Reduce", MPI_Reduce(&mine->mean_seconds, &seconds, 1, MPI_DOUBLE,
                                 MPI_MAX, 0, MPI_COMM_WORLD));
    if (s.ok()) {
      s = MpiStatus("MPI_Reduce",
                    MPI_Reduce(&my_wrong, &wrong, 1, MPI_LONG_LONG, MPI_SUM, 0,
                               MPI_COMM_WORLD));
    }
    if (!s.ok()) return s;
    if (rank == 0) {
      SizeMeasurement m;
      m.plan = p;
      m.seconds = seconds;
      m.wrong = wrong;
      std::printf("%s\n", SizeLineJson(m).dump().c_str());
      std::fflush(stdout);
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  absl::ParseCommandLine(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  absl::Status s = ringside::Run(rank, ranks);
  if (!s.ok()) {
    std::fprintf(stderr, "mpi_allreduce_peer rank %d: %s\n", rank,
                 s.ToString().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  MPI_Finalize();
  return 0;
}
