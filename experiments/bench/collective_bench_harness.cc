#include "experiments/bench/collective_bench_harness.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "experiments/cost/measured_collectives.h"

namespace ringside {

double AlgBandwidthGBps(int64_t bytes, double seconds) {
  if (seconds <= 0) return 0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double AllReduceBusBandwidthGBps(int64_t bytes, double seconds, int ranks) {
  return BusBandwidthGBps(BenchOp::kAllReduce, bytes, seconds, ranks);
}

const char* BenchOpName(BenchOp op) {
  switch (op) {
    case BenchOp::kAllReduce:
      return "allreduce";
    case BenchOp::kReduceScatter:
      return "reduce_scatter";
    case BenchOp::kAllGatherV:
      return "allgatherv";
  }
  return "?";
}

absl::StatusOr<BenchOp> ParseBenchOp(absl::string_view name) {
  for (BenchOp op :
       {BenchOp::kAllReduce, BenchOp::kReduceScatter, BenchOp::kAllGatherV}) {
    if (name == BenchOpName(op)) return op;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown operation '", name,
      "' (known: allreduce, reduce_scatter, allgatherv)"));
}

double BusBandwidthGBps(BenchOp op, int64_t bytes, double seconds, int ranks) {
  if (ranks < 2) return 0;
  const CollectiveOp collective =
      op == BenchOp::kAllReduce       ? CollectiveOp::kAllReduce
      : op == BenchOp::kReduceScatter ? CollectiveOp::kReduceScatter
                                      : CollectiveOp::kAllGather;
  // nccl-tests' bus bandwidth, as measured_collectives.h reads it back.
  return AlgBandwidthGBps(bytes, seconds) * BusFactor(collective, ranks);
}

std::vector<int64_t> BalancedShards(int64_t count, int ranks) {
  std::vector<int64_t> shards(ranks);
  for (int r = 0; r < ranks; ++r) {
    shards[r] = count / ranks + (r < count % ranks ? 1 : 0);
  }
  return shards;
}

absl::Status SweepOptions::Validate() const {
  if (min_bytes < static_cast<int64_t>(sizeof(float))) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_bytes must be >= 4, got ", min_bytes));
  }
  if (max_bytes < min_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_bytes (", max_bytes, ") must be >= min_bytes (", min_bytes, ")"));
  }
  if (step_factor < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("step_factor must be >= 2, got ", step_factor));
  }
  if (iters < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("iters must be >= 1, got ", iters));
  }
  if (warmup_iters < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup_iters must be >= 0, got ", warmup_iters));
  }
  if (iter_bytes_cap < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("iter_bytes_cap must be >= 1, got ", iter_bytes_cap));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SizePlan>> PlanSweep(const SweepOptions& options) {
  RS_RETURN_IF_ERROR(options.Validate());
  std::vector<SizePlan> plan;
  for (int64_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes *= options.step_factor) {
    SizePlan p;
    p.count = bytes / static_cast<int64_t>(sizeof(float));
    p.bytes = p.count * static_cast<int64_t>(sizeof(float));
    const int64_t capped = std::max<int64_t>(2, options.iter_bytes_cap / bytes);
    p.iters = static_cast<int>(std::min<int64_t>(options.iters, capped));
    // Warm-up shrinks with the timed iterations, but keeps at least one.
    p.warmup_iters =
        options.warmup_iters == 0
            ? 0
            : std::max(1, static_cast<int>(
                              static_cast<int64_t>(options.warmup_iters) *
                              p.iters / options.iters));
    p.busy_before_us = options.busy_before_us;
    plan.push_back(p);
    if (bytes > options.max_bytes / options.step_factor) break;  // overflow
  }
  return plan;
}

float FillValue(int rank, int64_t i) {
  return static_cast<float>((rank + 1) * (1 + i % 13));
}

float ExpectedSum(int ranks, int64_t i) {
  const int64_t rank_sum = static_cast<int64_t>(ranks) * (ranks + 1) / 2;
  return static_cast<float>(rank_sum * (1 + i % 13));
}

absl::Status HostRankComm::Upload(absl::Span<const float> values) {
  buffer_.assign(values.begin(), values.end());
  return absl::OkStatus();
}

absl::Status HostRankComm::AllReduce() {
  return AllReduceInPlace(absl::MakeSpan(buffer_));
}

absl::Status RankComm::Run(BenchOp op) {
  if (op == BenchOp::kAllReduce) return AllReduce();
  return absl::UnimplementedError(
      absl::StrCat("this backend runs allreduce only, not ", BenchOpName(op)));
}

absl::Status HostRankComm::ShardedInPlace(BenchOp op, absl::Span<float>) {
  return absl::UnimplementedError(
      absl::StrCat("this backend runs allreduce only, not ", BenchOpName(op)));
}

absl::Status HostRankComm::Run(BenchOp op) {
  if (op == BenchOp::kAllReduce) return AllReduce();
  return ShardedInPlace(op, absl::MakeSpan(buffer_));
}

absl::Status HostRankComm::Download(absl::Span<float> values) {
  if (values.size() != buffer_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Download: ", values.size(),
                                                   " floats asked, buffer has ",
                                                   buffer_.size()));
  }
  std::copy(buffer_.begin(), buffer_.end(), values.begin());
  return absl::OkStatus();
}

namespace {

void Fill(int rank, std::vector<float>& data) {
  for (size_t i = 0; i < data.size(); ++i) data[i] = FillValue(rank, i);
}

}  // namespace

absl::StatusOr<RankMeasurement> MeasureOnRank(RankComm& comm, int rank,
                                              int ranks, const SizePlan& plan,
                                              std::vector<float>& scratch,
                                              BenchOp op) {
  const std::string where = absl::StrCat(plan.bytes, " B: ");
  auto annotate = [&](absl::Status s) {
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat(where, s.message()));
  };
  // Where each rank's shard ends (BalancedShards, cumulative).
  std::vector<int64_t> shard_end = BalancedShards(plan.count, ranks);
  for (int r = 1; r < ranks; ++r) shard_end[r] += shard_end[r - 1];
  const int64_t end = shard_end[rank];
  const int64_t begin = rank == 0 ? 0 : shard_end[rank - 1];
  // The all-gather's input: this rank's shard, zeros elsewhere.
  auto fill = [&] {
    Fill(rank, scratch);
    if (op != BenchOp::kAllGatherV) return;
    for (int64_t i = 0; i < plan.count; ++i) {
      if (i < begin || i >= end) scratch[i] = 0.0f;
    }
  };
  scratch.resize(plan.count);
  fill();
  RS_RETURN_IF_ERROR(annotate(comm.Upload(scratch)));
  for (int i = 0; i < plan.warmup_iters; ++i) {
    RS_RETURN_IF_ERROR(annotate(comm.Run(op)));
  }
  RS_RETURN_IF_ERROR(annotate(comm.Barrier()));
  RankMeasurement m;
  if (plan.busy_before_us < 0) {
    Stopwatch watch;
    for (int i = 0; i < plan.iters; ++i) {
      RS_RETURN_IF_ERROR(annotate(comm.Run(op)));
    }
    m.mean_seconds = watch.ElapsedSeconds() / plan.iters;
  } else {
    double timed = 0;
    for (int i = 0; i < plan.iters; ++i) {
      RS_RETURN_IF_ERROR(annotate(comm.Barrier()));
      SpinFor(static_cast<double>(plan.busy_before_us) * 1e-6);
      const Stopwatch one;
      RS_RETURN_IF_ERROR(annotate(comm.Run(op)));
      timed += one.ElapsedSeconds();
    }
    m.mean_seconds = timed / plan.iters;
  }

  fill();
  RS_RETURN_IF_ERROR(annotate(comm.Upload(scratch)));
  RS_RETURN_IF_ERROR(annotate(comm.Run(op)));
  RS_RETURN_IF_ERROR(annotate(comm.Download(absl::MakeSpan(scratch))));
  int owner = 0;
  for (int64_t i = 0; i < plan.count; ++i) {
    while (i >= shard_end[owner]) ++owner;
    switch (op) {
      case BenchOp::kAllReduce:
        if (scratch[i] != ExpectedSum(ranks, i)) ++m.wrong;
        break;
      case BenchOp::kReduceScatter:
        if (owner == rank && scratch[i] != ExpectedSum(ranks, i)) ++m.wrong;
        break;
      case BenchOp::kAllGatherV:
        if (scratch[i] != FillValue(owner, i)) ++m.wrong;
        break;
    }
  }
  return m;
}

namespace {

// One thread per rank over `backend.connect`.
SweepResult RunThreaded(const AllReduceBackend& backend, int ranks,
                        const std::vector<SizePlan>& plan, BenchOp op) {
  std::vector<absl::Status> status(ranks);
  std::vector<std::vector<RankMeasurement>> done(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      absl::StatusOr<std::unique_ptr<RankComm>> comm =
          backend.connect(r, ranks);
      if (!comm.ok()) {
        status[r] = comm.status();
        return;
      }
      std::vector<float> scratch;
      for (const SizePlan& p : plan) {
        absl::StatusOr<RankMeasurement> m =
            MeasureOnRank(**comm, r, ranks, p, scratch, op);
        if (!m.ok()) {
          status[r] = m.status();
          return;
        }
        done[r].push_back(*m);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  SweepResult result;
  size_t completed = plan.size();
  for (int r = 0; r < ranks; ++r) {
    completed = std::min(completed, done[r].size());
  }
  for (size_t i = 0; i < completed; ++i) {
    SizeMeasurement m;
    m.plan = plan[i];
    for (int r = 0; r < ranks; ++r) {
      m.seconds = std::max(m.seconds, done[r][i].mean_seconds);
      m.wrong += done[r][i].wrong;
    }
    result.sizes.push_back(m);
  }
  // Report the root cause: a rank's own failure before the timeouts it
  // caused on its peers.
  for (bool want_timeout : {false, true}) {
    for (int r = 0; r < ranks && result.status.ok(); ++r) {
      const bool is_timeout =
          status[r].code() == absl::StatusCode::kDeadlineExceeded;
      if (!status[r].ok() && is_timeout == want_timeout) {
        result.status =
            absl::Status(status[r].code(),
                         absl::StrCat("rank ", r, ": ", status[r].message()));
      }
    }
  }
  return result;
}

}  // namespace

SweepResult RunBackend(const AllReduceBackend& backend, int ranks,
                       const std::vector<SizePlan>& plan, BenchOp op) {
  if (ranks < 1) {
    return {{},
            absl::InvalidArgumentError(
                absl::StrCat("ranks must be >= 1, got ", ranks))};
  }
  if (std::find(backend.ops.begin(), backend.ops.end(), op) ==
      backend.ops.end()) {
    return {{},
            absl::UnimplementedError(absl::StrCat(
                "backend ", backend.name, " does not run ", BenchOpName(op)))};
  }
  if (backend.run_plan) return backend.run_plan(ranks, plan);
  if (backend.connect) return RunThreaded(backend, ranks, plan, op);
  return {{},
          absl::InvalidArgumentError(absl::StrCat(
              "backend ", backend.name, " has neither connect nor run_plan"))};
}

std::string FormatBackendTable(const AllReduceBackend& backend, int ranks,
                               const SweepResult& result, BenchOp op) {
  std::string out =
      absl::StrFormat("# %s: %s; %s, %d ranks, in-place\n", backend.name,
                      backend.description, BenchOpName(op), ranks);
  const char* redop = op == BenchOp::kAllGatherV ? "none" : "sum";
  absl::StrAppendFormat(&out, "#%11s %13s %9s %7s %10s %8s %8s %7s %6s\n",
                        "size", "count", "type", "redop", "time", "algbw",
                        "busbw", "#wrong", "iters");
  absl::StrAppendFormat(&out, "#%11s %13s %9s %7s %10s %8s %8s %7s %6s\n",
                        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)",
                        "", "");
  double busbw_sum = 0;
  for (const SizeMeasurement& m : result.sizes) {
    const double busbw = BusBandwidthGBps(op, m.plan.bytes, m.seconds, ranks);
    busbw_sum += busbw;
    absl::StrAppendFormat(
        &out, "%12d %13d %9s %7s %10.1f %8.3f %8.3f %7d %6d\n", m.plan.bytes,
        m.plan.count, "float", redop, m.seconds * 1e6,
        AlgBandwidthGBps(m.plan.bytes, m.seconds), busbw, m.wrong,
        m.plan.iters);
  }
  if (!result.sizes.empty()) {
    absl::StrAppendFormat(&out, "# Avg bus bandwidth    : %.3f GB/s\n",
                          busbw_sum / result.sizes.size());
  }
  if (!result.status.ok()) {
    // A multi-line status (e.g. a child's stderr tail) stays a comment.
    absl::StrAppend(
        &out, "# ", backend.name,
        result.sizes.empty() ? " unavailable: " : " stopped: ",
        absl::StrReplaceAll(result.status.ToString(), {{"\n", "\n#   "}}),
        "\n");
  }
  return out;
}

namespace {

const SizeMeasurement* FindSize(const SweepResult& r, int64_t bytes) {
  for (const SizeMeasurement& m : r.sizes) {
    if (m.plan.bytes == bytes) return &m;
  }
  return nullptr;
}

}  // namespace

std::string FormatComparison(const std::vector<std::string>& names,
                             const std::vector<SweepResult>& results,
                             int subject) {
  std::vector<int64_t> sizes;
  for (const SweepResult& r : results) {
    for (const SizeMeasurement& m : r.sizes) {
      if (std::find(sizes.begin(), sizes.end(), m.plan.bytes) == sizes.end()) {
        sizes.push_back(m.plan.bytes);
      }
    }
  }
  std::sort(sizes.begin(), sizes.end());
  std::string out = absl::StrFormat(
      "# time per size; %s/X = time(%s) / time(X), > 1 means %s "
      "is slower\n#%11s",
      names[subject], names[subject], names[subject], "size (B)");
  for (const std::string& n : names) {
    absl::StrAppendFormat(&out, " %12s", absl::StrCat(n, " (us)"));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (static_cast<int>(i) == subject) continue;
    absl::StrAppendFormat(&out, " %12s",
                          absl::StrCat(names[subject], "/", names[i]));
  }
  absl::StrAppend(&out, "\n");
  for (int64_t bytes : sizes) {
    absl::StrAppendFormat(&out, "%12d", bytes);
    for (const SweepResult& r : results) {
      const SizeMeasurement* m = FindSize(r, bytes);
      if (m == nullptr) {
        absl::StrAppendFormat(&out, " %12s", "n/a");
      } else {
        absl::StrAppendFormat(&out, " %12.1f", m->seconds * 1e6);
      }
    }
    const SizeMeasurement* mine = FindSize(results[subject], bytes);
    for (size_t i = 0; i < results.size(); ++i) {
      if (static_cast<int>(i) == subject) continue;
      const SizeMeasurement* other = FindSize(results[i], bytes);
      if (mine == nullptr || other == nullptr || other->seconds <= 0) {
        absl::StrAppendFormat(&out, " %12s", "n/a");
      } else {
        absl::StrAppendFormat(&out, " %12.2f", mine->seconds / other->seconds);
      }
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

nlohmann::json RowJson(const std::string& backend, int ranks,
                       const SizeMeasurement& m, BenchOp op) {
  return {
      {"backend", backend},
      {"op", BenchOpName(op)},
      {"ranks", ranks},
      {"bytes", m.plan.bytes},
      {"count", m.plan.count},
      {"type", "float"},
      {"redop", op == BenchOp::kAllGatherV ? "none" : "sum"},
      {"iters", m.plan.iters},
      {"warmup_iters", m.plan.warmup_iters},
      {"time_us", m.seconds * 1e6},
      {"algbw_gbps", AlgBandwidthGBps(m.plan.bytes, m.seconds)},
      {"busbw_gbps", BusBandwidthGBps(op, m.plan.bytes, m.seconds, ranks)},
      {"wrong", m.wrong}};
}

}  // namespace ringside

namespace ringside {

std::vector<std::string> PlanToFlags(const std::vector<SizePlan>& plan) {
  std::vector<std::string> sizes, iters, warmups;
  for (const SizePlan& p : plan) {
    sizes.push_back(absl::StrCat(p.bytes));
    iters.push_back(absl::StrCat(p.iters));
    warmups.push_back(absl::StrCat(p.warmup_iters));
  }
  return {absl::StrCat("--sizes=", absl::StrJoin(sizes, ",")),
          absl::StrCat("--iters=", absl::StrJoin(iters, ",")),
          absl::StrCat("--warmup_iters=", absl::StrJoin(warmups, ","))};
}

absl::StatusOr<std::vector<SizePlan>> PlanFromLists(
    const std::vector<std::string>& sizes,
    const std::vector<std::string>& iters,
    const std::vector<std::string>& warmup_iters) {
  if (sizes.size() != iters.size() || sizes.size() != warmup_iters.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sizes, --iters and --warmup_iters have ", sizes.size(), ", ",
        iters.size(), " and ", warmup_iters.size(), " items"));
  }
  std::vector<SizePlan> plan;
  for (size_t i = 0; i < sizes.size(); ++i) {
    SizePlan p;
    if (!absl::SimpleAtoi(sizes[i], &p.bytes) || p.bytes < 4 ||
        !absl::SimpleAtoi(iters[i], &p.iters) || p.iters < 1 ||
        !absl::SimpleAtoi(warmup_iters[i], &p.warmup_iters) ||
        p.warmup_iters < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad plan item ", i, ": size '", sizes[i], "' iters '",
                       iters[i], "' warmup '", warmup_iters[i], "'"));
    }
    p.count = p.bytes / static_cast<int64_t>(sizeof(float));
    p.bytes = p.count * static_cast<int64_t>(sizeof(float));
    plan.push_back(p);
  }
  return plan;
}

nlohmann::json SizeLineJson(const SizeMeasurement& m) {
  return {{"bytes", m.plan.bytes},      {"count", m.plan.count},
          {"iters", m.plan.iters},      {"warmup_iters", m.plan.warmup_iters},
          {"time_us", m.seconds * 1e6}, {"wrong", m.wrong}};
}

absl::StatusOr<SizeMeasurement> ParseSizeLine(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr,
                                           /*allow_exceptions=*/false);
  const char* keys[] = {"bytes",        "count",   "iters",
                        "warmup_iters", "time_us", "wrong"};
  bool ok = j.is_object();
  for (const char* k : keys) ok = ok && j.contains(k) && j[k].is_number();
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a size line: '", line, "'"));
  }
  SizeMeasurement m;
  m.plan.bytes = j["bytes"].get<int64_t>();
  m.plan.count = j["count"].get<int64_t>();
  m.plan.iters = j["iters"].get<int>();
  m.plan.warmup_iters = j["warmup_iters"].get<int>();
  m.seconds = j["time_us"].get<double>() / 1e6;
  m.wrong = j["wrong"].get<int64_t>();
  return m;
}

absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  std::string t = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  if (absl::EndsWith(t, "IB")) t.resize(t.size() - 2);
  if (absl::EndsWith(t, "B")) t.resize(t.size() - 1);
  int64_t scale = 1;
  if (!t.empty()) {
    switch (t.back()) {
      case 'K':
        scale = int64_t{1} << 10;
        break;
      case 'M':
        scale = int64_t{1} << 20;
        break;
      case 'G':
        scale = int64_t{1} << 30;
        break;
    }
    if (scale != 1) t.pop_back();
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(t, &v) || v < 0 || v > (int64_t{1} << 50) / scale) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a byte count: '", text, "'"));
  }
  return v * scale;
}

}  // namespace ringside
