// Collective benchmark harness, in the style of nccl-tests: one shared
// harness owns the sweep (sizes and iteration counts), warm-up, timing,
// correctness check and the tables; each all-reduce backend plugs in through
// a small struct (AllReduceBackend) whose per-rank handle (RankComm) only
// knows how to upload a buffer, all-reduce it in place, download it and
// barrier.
//
// Measures (docs/DESIGN.md, nccl-tests' definitions): for S bytes
// all-reduced in t seconds over n ranks, algbw = S / t and busbw =
// algbw * 2(n-1)/n, both in GB/s (1e9 bytes/s). t is the slowest rank's
// mean time per timed iteration, taken after a barrier that follows the
// warm-up: the iterations back to back (nccl-tests' way), or with
// SweepOptions::busy_before_us >= 0 each one alone after a barrier and that
// long of busy-waiting on every rank (as a training step's compute keeps
// the cores busy until its collective), the wait not timed.
//
// Correctness: before the check, rank r fills element i with
// FillValue(r, i) (small integers, exact in float32); after one all-reduce
// every element must equal ExpectedSum(n, i) exactly. "#wrong" counts the
// elements that differ, summed over ranks.
//
// Thread-safety: the free functions are thread-safe. RunBackend runs one
// thread per rank for in-process backends and must not run concurrently
// with another RunBackend of the same backend object.
#ifndef RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_HARNESS_H_
#define RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_HARNESS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ringside {

// ---- Measures -------------------------------------------------------------

// S / t in GB/s (1e9 bytes per second). 0 if seconds <= 0.
double AlgBandwidthGBps(int64_t bytes, double seconds);
// algbw * 2(n-1)/n: the all-reduce's bus bandwidth in GB/s; 0 for n < 2.
double AllReduceBusBandwidthGBps(int64_t bytes, double seconds, int ranks);

// ---- Operations -----------------------------------------------------------

// What is timed. S is the whole buffer in every case (nccl-tests' size for
// reduce_scatter_perf and all_gather_perf): reduce-scatter and all-gather
// move (n-1)/n of it per rank, all-reduce twice that. The sharded pair cut
// the buffer into BalancedShards.
enum class BenchOp { kAllReduce, kReduceScatter, kAllGatherV };
const char* BenchOpName(BenchOp op);  // "allreduce", "reduce_scatter", ...
absl::StatusOr<BenchOp> ParseBenchOp(absl::string_view name);
// algbw times nccl-tests' bus factor for `op`: 2(n-1)/n for all-reduce,
// (n-1)/n for reduce-scatter and all-gather; 0 for n < 2.
double BusBandwidthGBps(BenchOp op, int64_t bytes, double seconds, int ranks);
// `count` floats over `ranks` shards, the first count % ranks one longer.
std::vector<int64_t> BalancedShards(int64_t count, int ranks);

// ---- Sweep plan -----------------------------------------------------------

struct SweepOptions {
  // Smallest message, bytes (rounded down to whole floats). Default 4 KiB.
  int64_t min_bytes = 4 << 10;
  // Largest message, bytes; sizes grow by step_factor while <= max_bytes.
  // Default 256 MiB.
  int64_t max_bytes = 256 << 20;
  // Ratio between consecutive sizes (>= 2). Default 4.
  int step_factor = 4;
  // Timed iterations per size before scaling. Default 100 (nccl-tests'
  // -n is 20; small messages on a loaded 2-core host need more to average
  // out scheduling jitter).
  int iters = 100;
  // Warm-up iterations per size before scaling. Default 10 (nccl-tests'
  // -w is 5).
  int warmup_iters = 10;
  // Cap on bytes * timed iterations per size: large sizes run
  // max(2, cap / bytes) iterations (never more than `iters`), and their
  // warm-up shrinks in proportion (at least 1). Default 1 GiB.
  int64_t iter_bytes_cap = int64_t{1} << 30;
  // How each timed iteration starts: < 0 (default) right behind the one
  // before; 0 after a barrier, the cores idle; > 0 after a barrier and
  // this many microseconds of busy-waiting on every rank.
  int64_t busy_before_us = -1;

  // OK, or INVALID_ARGUMENT naming the bad field.
  absl::Status Validate() const;
};

// One size of the sweep.
struct SizePlan {
  int64_t bytes = 0;  // count * sizeof(float)
  int64_t count = 0;  // float32 elements
  int iters = 0;      // timed iterations
  int warmup_iters = 0;
  int64_t busy_before_us = -1;  // SweepOptions::busy_before_us
};

// The sizes min_bytes, min_bytes*f, ... <= max_bytes with their iteration
// counts. INVALID_ARGUMENT if the options are bad.
absl::StatusOr<std::vector<SizePlan>> PlanSweep(const SweepOptions& options);

// ---- Correctness ----------------------------------------------------------

// Value rank `rank` puts at element `i` before the checked all-reduce:
// (rank + 1) * (1 + i % 13).
float FillValue(int rank, int64_t i);
// The exact sum over `ranks` ranks of FillValue(r, i).
float ExpectedSum(int ranks, int64_t i);

// ---- Backend plug-in ------------------------------------------------------

// One rank's handle on a backend. Used by one thread; every call is blocking
// and collective except Upload/Download.
class RankComm {
 public:
  virtual ~RankComm() = default;
  // Makes `values` the backend's buffer (host or device memory). Untimed.
  virtual absl::Status Upload(absl::Span<const float> values) = 0;
  // In-place sum all-reduce of the whole uploaded buffer; returns when the
  // result is in place. This is what the harness times.
  virtual absl::Status AllReduce() = 0;
  // Copies the buffer out; values.size() == uploaded size. Untimed.
  virtual absl::Status Download(absl::Span<float> values) = 0;
  virtual absl::Status Barrier() = 0;
  // Runs `op` in place on the uploaded buffer (the sharded ones over
  // BalancedShards). Default: AllReduce for kAllReduce, else UNIMPLEMENTED.
  virtual absl::Status Run(BenchOp op);
};

// RankComm over a host std::vector<float>: subclasses implement the
// all-reduce and barrier; Upload/Download are copies.
class HostRankComm : public RankComm {
 public:
  absl::Status Upload(absl::Span<const float> values) override;
  absl::Status AllReduce() override;
  absl::Status Download(absl::Span<float> values) override;

 protected:
  virtual absl::Status AllReduceInPlace(absl::Span<float> data) = 0;
  // kReduceScatter / kAllGatherV over BalancedShards of `data`; default
  // UNIMPLEMENTED (a backend that only all-reduces).
  virtual absl::Status ShardedInPlace(BenchOp op, absl::Span<float> data);

 public:
  absl::Status Run(BenchOp op) override;

 private:
  std::vector<float> buffer_;
};

// What the harness measured for one size, across all ranks.
struct SizeMeasurement {
  SizePlan plan;
  double seconds = 0;  // max over ranks of mean time per timed iteration
  int64_t wrong = 0;   // wrong elements, summed over ranks
};

// A backend's sweep: the sizes that completed, and why it stopped early
// (OK if every size ran).
struct SweepResult {
  std::vector<SizeMeasurement> sizes;
  absl::Status status;
};

// The plug-in struct (nccl-tests' `struct testColl`). Exactly one of
// `connect` / `run_plan` is set.
struct AllReduceBackend {
  // Short name used in tables, flags and ratios: "ours", "gloo", "mpi".
  std::string name;
  // One line on what it is, printed above its table.
  std::string description;
  // In-process backends: connects rank `rank` of `ranks`. The harness calls
  // it once per rank, concurrently on one thread per rank, then drives the
  // returned handle on that thread through MeasureOnRank for every size.
  std::function<absl::StatusOr<std::unique_ptr<RankComm>>(int rank, int ranks)>
      connect;
  // Out-of-process backends (e.g. mpirun children that call MeasureOnRank
  // themselves): runs the whole plan and reports each size.
  std::function<SweepResult(int ranks, const std::vector<SizePlan>& plan)>
      run_plan;
  // The operations it runs (run_plan backends: all-reduce only).
  std::vector<BenchOp> ops = {BenchOp::kAllReduce};
};

// One rank's result for one size.
struct RankMeasurement {
  double mean_seconds = 0;  // this rank's mean time per timed iteration
  int64_t wrong = 0;        // this rank's wrong elements
};

// The per-rank loop for one size: fill + upload, warm-up, barrier, timed
// iterations, then fill + upload, one `op`, download and count wrong
// elements: all-reduce, every element; reduce-scatter, this rank's shard
// (= ExpectedSum); all-gather, every element (= FillValue of the shard's
// owner; before it each rank fills only its own shard). `scratch` is
// resized to plan.count. Collective: every rank calls it with the same plan
// and op. Blocking.
absl::StatusOr<RankMeasurement> MeasureOnRank(
    RankComm& comm, int rank, int ranks, const SizePlan& plan,
    std::vector<float>& scratch, BenchOp op = BenchOp::kAllReduce);

// Runs `backend` over `ranks` ranks for every size of `plan` (threads for
// `connect` backends, `run_plan` otherwise). Blocking; failures end up in
// the result's status, with the sizes that completed before them.
// UNIMPLEMENTED (no sizes) when `op` is not among backend.ops.
SweepResult RunBackend(const AllReduceBackend& backend, int ranks,
                       const std::vector<SizePlan>& plan,
                       BenchOp op = BenchOp::kAllReduce);

// ---- Out-of-process backends --------------------------------------------
// A child (e.g. experiments/bench/mpi_allreduce_peer under mpirun) receives the
// plan as three flags and prints one JSON line per size from one rank.

// {"--sizes=b1,b2,..", "--iters=i1,..", "--warmup_iters=w1,.."}.
std::vector<std::string> PlanToFlags(const std::vector<SizePlan>& plan);
// Inverse of PlanToFlags from the three comma lists' items.
// INVALID_ARGUMENT on bad numbers or lists of different lengths.
absl::StatusOr<std::vector<SizePlan>> PlanFromLists(
    const std::vector<std::string>& sizes,
    const std::vector<std::string>& iters,
    const std::vector<std::string>& warmup_iters);
// {"bytes","count","iters","warmup_iters","time_us","wrong"}.
nlohmann::json SizeLineJson(const SizeMeasurement& m);
// Inverse of SizeLineJson; INVALID_ARGUMENT quoting the line if it is not.
absl::StatusOr<SizeMeasurement> ParseSizeLine(const std::string& line);

// "4096", "4K", "64KiB", "256M", "1G" (binary multiples) -> bytes.
absl::StatusOr<int64_t> ParseBytes(const std::string& text);

// ---- Output ---------------------------------------------------------------

// The nccl-tests table of one backend (size, count, type, redop, time,
// algbw, busbw, #wrong, plus iters), its average bus bandwidth, and the
// error line if the sweep stopped early.
std::string FormatBackendTable(const AllReduceBackend& backend, int ranks,
                               const SweepResult& result,
                               BenchOp op = BenchOp::kAllReduce);
// Per size: each backend's time and the ratio time(subject) / time(other)
// for every other backend (> 1: subject slower). "n/a" where either side
// has no row.
std::string FormatComparison(const std::vector<std::string>& names,
                             const std::vector<SweepResult>& results,
                             int subject);
// One JSON object per table row.
nlohmann::json RowJson(const std::string& backend, int ranks,
                       const SizeMeasurement& m,
                       BenchOp op = BenchOp::kAllReduce);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_BENCH_COLLECTIVE_BENCH_HARNESS_H_
