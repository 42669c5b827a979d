// Measured collective performance, for pricing a cluster's links from what
// its collectives really achieve instead of their nominal rate: the printed
// output of NVIDIA's nccl-tests (all_reduce_perf, reduce_scatter_perf,
// all_gather_perf, sendrecv_perf) or of ringside's collective_bench, one or
// several runs a file, each at its own number of ranks.
//
// A run is the rows of one table: size in bytes, then the time in µs (the
// in-place time where the tool prints out-of-place and in-place columns;
// collective_bench prints in-place only). What each run is comes from, in
// order: a `# ringside: collective=all_reduce ranks=16 nodes=2` line (which
// starts a new run; `columns=size,count,...,time,...` names the columns of
// a table in another layout), collective_bench's header ("# gloo: ...;
// all_reduce, 4 ranks, in-place"), nccl-tests' own lines ("# Collective
// test starting: all_reduce_perf", one "#  Rank  R Group ... on HOST
// device ..." line per rank: the ranks, and the nodes as distinct hosts),
// and for the collective the file's name (all_reduce, reduce_scatter,
// all_gather, sendrecv). Lines `# link: TYPE`, `# source: ...` and
// `# nominal_gbit: X` (the link's nominal rate, for a built-in table
// scaled to another link of its type) describe the file.
//
// Bus bandwidth is nccl-tests' (its PERFORMANCE.md): busbw = algbw ·
// factor, factor 2(n−1)/n for all-reduce, (n−1)/n for reduce-scatter and
// all-gather (size the whole buffer), 1 for send/receive, so that it reads
// as the bandwidth of each link of a ring, what the α-β model's B is.
//
// Interpolation (Seconds, BusBandwidth): within a run, time against bytes
// log-log between measured sizes; below the smallest size and above the
// largest, that size's bus bandwidth (a table that starts at 8 B holds the
// latency floor itself; one that starts at 512 MB says nothing of latency). Across runs, bus
// bandwidth at that size linearly in log2(n) between the two nearest
// measured rank counts; outside them the nearest run's. Pure after Parse;
// thread-safe to read.
#ifndef RINGSIDE_EXPERIMENTS_COST_MEASURED_COLLECTIVES_H_
#define RINGSIDE_EXPERIMENTS_COST_MEASURED_COLLECTIVES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kSendRecv };

// "all_reduce", "reduce_scatter", "all_gather", "sendrecv".
std::string CollectiveOpName(CollectiveOp op);
// busbw / algbw for `op` at n ranks (n >= 1): 2(n−1)/n, (n−1)/n or 1.
double BusFactor(CollectiveOp op, int64_t ranks);

struct MeasuredPoint {
  double bytes = 0;
  double seconds = 0;
};

struct CollectiveRun {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t ranks = 0;
  int64_t nodes = 0;  // 0: not stated
  std::string where;  // "PATH:LINE" of its first row
  std::vector<MeasuredPoint> points;  // ascending bytes, distinct
};

class MeasuredCollectives {
 public:
  // Parses one file's text (the file comment's format). INVALID_ARGUMENT
  // "PATH:LINE: ..." naming the field for a row that does not parse, a
  // non-positive size or time, sizes out of order, a run whose collective
  // or ranks cannot be told, or a file with no rows.
  static absl::StatusOr<MeasuredCollectives> Parse(absl::string_view text,
                                                   const std::string& path);
  // Reads and parses the file at `path`; NOT_FOUND when unreadable.
  static absl::StatusOr<MeasuredCollectives> Read(const std::string& path);

  // Adds `other`'s runs (and its sources). INVALID_ARGUMENT when both hold
  // a run of the same collective at the same ranks.
  absl::Status Merge(const MeasuredCollectives& other);

  // Multiplies every run's bus bandwidth by `factor` (> 0): a built-in
  // table of a link type scaled to a link of another nominal rate.
  void ScaleBandwidth(double factor);

  bool Has(CollectiveOp op) const;
  // Bus bandwidth (bytes/s) and time (s) of `op` over `bytes` at `ranks`
  // (>= 2), interpolated (file comment); nullopt without a run of `op`.
  std::optional<double> BusBandwidth(CollectiveOp op, int64_t ranks,
                                     double bytes) const;
  std::optional<double> Seconds(CollectiveOp op, int64_t ranks,
                                double bytes) const;

  const std::vector<CollectiveRun>& runs() const { return runs_; }
  // The files' `# link:`, `# source:` and `# nominal_gbit:` lines (the
  // last file's link and rate; every source).
  const std::string& link() const { return link_; }
  const std::vector<std::string>& sources() const { return sources_; }
  double nominal_gbit() const { return nominal_gbit_; }
  // "all_reduce at 8, 16 ranks; sendrecv at 2 ranks".
  std::string Summary() const;

 private:
  std::vector<CollectiveRun> runs_;
  std::string link_;
  std::vector<std::string> sources_;
  double nominal_gbit_ = 0;
};

// The α-β line a strategy's messages see at `ranks`: the all-reduce's
// measured times at two message sizes (`small_bytes` < `large_bytes`, e.g.
// ring's first bucket and its other buckets) give B and α of the model's
// ring all-reduce, t(s) = 2(n−1)/n · s/B + 2(n−1)α, passing through both
// (α clamped at 0, when B is then from the large size alone). Where the
// small size lies below every measured size, the table knows no latency:
// B is from the large size and latency_s is nullopt (the caller keeps the
// link's nominal α).
struct FittedLink {
  double bandwidth_Bps = 0;
  std::optional<double> latency_s = 0;
};
// nullopt without an all-reduce run or for ranks < 2.
std::optional<FittedLink> FitAllReduceLink(const MeasuredCollectives& m,
                                           int64_t ranks, double small_bytes,
                                           double large_bytes);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_MEASURED_COLLECTIVES_H_
