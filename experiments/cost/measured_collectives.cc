#include "experiments/cost/measured_collectives.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringside {
namespace {

// The collective a name stands for: nccl-tests' binaries and ringside's
// collective_bench operations alike.
std::optional<CollectiveOp> OpNamed(absl::string_view raw) {
  const std::string lower = absl::AsciiStrToLower(raw);
  absl::string_view bare = lower;
  absl::ConsumeSuffix(&bare, "_perf");
  const std::string name = absl::StrReplaceAll(bare, {{"_", ""}});
  if (name == "allreduce") return CollectiveOp::kAllReduce;
  if (name == "reducescatter") return CollectiveOp::kReduceScatter;
  if (name == "allgather" || name == "allgatherv") {
    return CollectiveOp::kAllGather;
  }
  if (name == "sendrecv") return CollectiveOp::kSendRecv;
  return std::nullopt;
}

// The collective a file's name says, if exactly one.
std::optional<CollectiveOp> OpFromFileName(const std::string& path) {
  const std::string base = absl::AsciiStrToLower(
      std::filesystem::path(path).filename().string());
  std::optional<CollectiveOp> found;
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
        CollectiveOp::kAllGather, CollectiveOp::kSendRecv}) {
    const std::string name = CollectiveOpName(op);
    const std::string bare = absl::StrReplaceAll(name, {{"_", ""}});
    if (absl::StrContains(base, name) || absl::StrContains(base, bare)) {
      if (found.has_value()) return std::nullopt;
      found = op;
    }
  }
  return found;
}

// What is known of the run whose rows come next.
struct RunHeader {
  std::optional<CollectiveOp> op;
  std::optional<CollectiveOp> op_from_tool;  // "Collective test starting"
  int64_t ranks = 0;
  int64_t nodes = 0;
  int64_t rank_lines = 0;  // nccl-tests' "#  Rank R ..." lines
  std::set<std::string> hosts;
  std::vector<std::string> columns;  // empty: by the row's field count
};

// Index of the size and of the time to take in a row of `fields` fields
// under `columns`, or an error naming the layout.
absl::Status RowLayout(const std::vector<std::string>& columns,
                       size_t fields, size_t& size_at, size_t& time_at) {
  if (!columns.empty()) {
    if (fields != columns.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          fields, " fields where columns= names ", columns.size()));
    }
    auto size = std::find(columns.begin(), columns.end(), "size");
    auto time = std::find(columns.rbegin(), columns.rend(), "time");
    if (size == columns.end() || time == columns.rend()) {
      return absl::InvalidArgumentError(
          "columns= must name a 'size' and a 'time' column");
    }
    size_at = size - columns.begin();
    time_at = columns.size() - 1 - (time - columns.rbegin());
    return absl::OkStatus();
  }
  size_at = 0;
  switch (fields) {
    case 13:  // nccl-tests: size count type redop root, 2 × time algbw busbw #wrong
      time_at = 9;
      return absl::OkStatus();
    case 12:  // nccl-tests without the root column
      time_at = 8;
      return absl::OkStatus();
    case 9:  // collective_bench: size count type redop time algbw busbw #wrong iters
      time_at = 4;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          fields,
          " fields, not a layout known by its width (nccl-tests' 13 or 12, "
          "collective_bench's 9): name them with columns= on a "
          "'# ringside:' line"));
  }
}

double LogLerp(double x, double x0, double x1, double y0, double y1) {
  const double w = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(y0) + w * (std::log(y1) - std::log(y0)));
}

// The run's time over `bytes` (the header comment's rule within a run).
double RunSeconds(const CollectiveRun& run, double bytes) {
  const std::vector<MeasuredPoint>& p = run.points;
  if (bytes <= p.front().bytes) {
    return p.front().seconds * bytes / p.front().bytes;
  }
  if (bytes >= p.back().bytes) {
    return p.back().seconds * bytes / p.back().bytes;
  }
  auto hi = std::upper_bound(
      p.begin(), p.end(), bytes,
      [](double b, const MeasuredPoint& m) { return b < m.bytes; });
  auto lo = hi - 1;
  if (lo->bytes == bytes) return lo->seconds;
  return LogLerp(bytes, lo->bytes, hi->bytes, lo->seconds, hi->seconds);
}

// INVALID_ARGUMENT "WHERE: a second run of OP at N ranks (the first at
// ...)" when `runs` already holds one of `run`'s collective and ranks.
absl::Status RefuseSecondRun(const std::vector<CollectiveRun>& runs,
                             const CollectiveRun& run) {
  for (const CollectiveRun& r : runs) {
    if (r.op == run.op && r.ranks == run.ranks) {
      return absl::InvalidArgumentError(absl::StrCat(
          run.where, ": a second run of ", CollectiveOpName(run.op), " at ",
          run.ranks, " ranks (the first at ", r.where, ")"));
    }
  }
  return absl::OkStatus();
}

double RunBusBandwidth(const CollectiveRun& run, double bytes) {
  return BusFactor(run.op, run.ranks) * bytes / RunSeconds(run, bytes);
}

}  // namespace

std::string CollectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

double BusFactor(CollectiveOp op, int64_t ranks) {
  const double n = static_cast<double>(std::max<int64_t>(ranks, 1));
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return (n - 1) / n;
    case CollectiveOp::kSendRecv:
      return 1;
  }
  return 1;
}

absl::StatusOr<MeasuredCollectives> MeasuredCollectives::Parse(
    absl::string_view text, const std::string& path) {
  static const std::regex kRankLine(
      R"(^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device)");
  static const std::regex kBenchHeader(
      R"(^#\s*\S+:.*;\s*([a-z_]+),\s*(\d+)\s+ranks)");
  static const std::regex kTestStarting(
      R"(Collective test starting:\s*(\S+))");
  MeasuredCollectives out;
  RunHeader header;
  CollectiveRun run;
  int line_number = 0;
  int run_line = 0;  // the current run's first row

  auto finish = [&]() -> absl::Status {
    if (run.points.empty()) return absl::OkStatus();
    const std::string where = absl::StrCat(path, ":", run_line, ": ");
    std::optional<CollectiveOp> op = header.op;
    if (!op) op = header.op_from_tool;
    if (!op) op = OpFromFileName(path);
    if (!op) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'collective': cannot tell which collective this run "
                 "measured (no '# ringside: collective=...' line, no "
                 "collective_bench or nccl-tests header, and the file's name "
                 "names none of all_reduce, reduce_scatter, all_gather, "
                 "sendrecv)"));
    }
    int64_t ranks = header.ranks > 0 ? header.ranks : header.rank_lines;
    if (ranks <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'ranks': cannot tell how many ranks this run had (no "
                 "'# ringside: ranks=N' line, no collective_bench header, no "
                 "nccl-tests '#  Rank' lines)"));
    }
    if (ranks < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'ranks': a run at 1 rank measures no link"));
    }
    run.op = *op;
    run.ranks = ranks;
    run.nodes = header.nodes > 0 ? header.nodes
                                 : static_cast<int64_t>(header.hosts.size());
    run.where = absl::StrCat(path, ":", run_line);
    if (absl::Status s = RefuseSecondRun(out.runs_, run); !s.ok()) return s;
    out.runs_.push_back(std::move(run));
    run = CollectiveRun();
    header = RunHeader();
    return absl::OkStatus();
  };

  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::string line(absl::StripAsciiWhitespace(raw));
    if (line.empty()) continue;
    const std::string where = absl::StrCat(path, ":", line_number, ": ");
    std::smatch m;
    if (line[0] == '#') {
      absl::string_view body = absl::StripAsciiWhitespace(
          absl::string_view(line).substr(1));
      if (absl::ConsumePrefix(&body, "ringside:")) {
        if (absl::Status s = finish(); !s.ok()) return s;
        for (absl::string_view item :
             absl::StrSplit(body, ' ', absl::SkipWhitespace())) {
          const size_t eq = item.find('=');
          const std::string key(item.substr(0, eq));
          const std::string value(
              eq == absl::string_view::npos ? "" : item.substr(eq + 1));
          const std::string bad =
              absl::StrCat(where, "field '", key, "': '", value, "' ");
          if (key == "collective") {
            header.op = OpNamed(value);
            if (!header.op) {
              return absl::InvalidArgumentError(absl::StrCat(
                  bad, "is not all_reduce, reduce_scatter, all_gather or "
                       "sendrecv"));
            }
          } else if (key == "ranks" || key == "nodes") {
            int64_t x = 0;
            if (!absl::SimpleAtoi(value, &x) || x < 1) {
              return absl::InvalidArgumentError(
                  absl::StrCat(bad, "is not an integer >= 1"));
            }
            (key == "ranks" ? header.ranks : header.nodes) = x;
          } else if (key == "columns") {
            header.columns = absl::StrSplit(value, ',');
          } else {
            return absl::InvalidArgumentError(absl::StrCat(
                where, "field '", key,
                "': unknown (known: collective, ranks, nodes, columns)"));
          }
        }
      } else if (absl::ConsumePrefix(&body, "link:")) {
        out.link_ = std::string(absl::StripAsciiWhitespace(body));
      } else if (absl::ConsumePrefix(&body, "source:")) {
        out.sources_.push_back(std::string(absl::StripAsciiWhitespace(body)));
      } else if (absl::ConsumePrefix(&body, "nominal_gbit:")) {
        double x = 0;
        if (!absl::SimpleAtod(absl::StripAsciiWhitespace(body), &x) ||
            !(x > 0) || !std::isfinite(x)) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, "field 'nominal_gbit': not a number > 0"));
        }
        out.nominal_gbit_ = x;
      } else if (std::regex_search(line, m, kRankLine)) {
        if (!run.points.empty()) {
          if (absl::Status s = finish(); !s.ok()) return s;
        }
        header.rank_lines =
            std::max<int64_t>(header.rank_lines, std::stoll(m[1].str()) + 1);
        header.hosts.insert(m[2].str());
      } else if (std::regex_search(line, m, kTestStarting)) {
        if (absl::Status s = finish(); !s.ok()) return s;
        header.op_from_tool = OpNamed(m[1].str());
      } else if (absl::StartsWith(body, "nThread")) {
        if (absl::Status s = finish(); !s.ok()) return s;
      } else if (std::regex_search(line, m, kBenchHeader) &&
                 OpNamed(m[1].str())) {
        if (absl::Status s = finish(); !s.ok()) return s;
        header.op_from_tool = OpNamed(m[1].str());
        header.ranks = std::stoll(m[2].str());
      }
      continue;
    }
    const std::vector<std::string> fields =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    size_t size_at = 0, time_at = 0;
    if (absl::Status s = RowLayout(header.columns, fields.size(), size_at,
                                   time_at);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "row '", line, "': ", s.message()));
    }
    double bytes = 0, us = 0;
    if (!absl::SimpleAtod(fields[size_at], &bytes) || !(bytes > 0) ||
        !std::isfinite(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'size': '", fields[size_at],
          "' is not a number of bytes > 0"));
    }
    if (!absl::SimpleAtod(fields[time_at], &us) || !(us > 0) ||
        !std::isfinite(us)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'time': '", fields[time_at],
          "' is not a time in us > 0"));
    }
    if (!run.points.empty() && bytes <= run.points.back().bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "field 'size': ", fields[size_at],
          " is not above the row before's ", run.points.back().bytes,
          " (a new run needs its own header)"));
    }
    if (run.points.empty()) run_line = line_number;
    run.points.push_back({bytes, us * 1e-6});
  }
  if (absl::Status s = finish(); !s.ok()) return s;
  if (out.runs_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no rows of measured collectives"));
  }
  return out;
}

absl::StatusOr<MeasuredCollectives> MeasuredCollectives::Read(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

absl::Status MeasuredCollectives::Merge(const MeasuredCollectives& other) {
  for (const CollectiveRun& r : other.runs_) {
    if (absl::Status s = RefuseSecondRun(runs_, r); !s.ok()) return s;
  }
  runs_.insert(runs_.end(), other.runs_.begin(), other.runs_.end());
  sources_.insert(sources_.end(), other.sources_.begin(),
                  other.sources_.end());
  if (!other.link_.empty()) link_ = other.link_;
  if (other.nominal_gbit_ > 0) nominal_gbit_ = other.nominal_gbit_;
  return absl::OkStatus();
}

void MeasuredCollectives::ScaleBandwidth(double factor) {
  for (CollectiveRun& r : runs_) {
    for (MeasuredPoint& p : r.points) p.seconds /= factor;
  }
}

bool MeasuredCollectives::Has(CollectiveOp op) const {
  return std::any_of(runs_.begin(), runs_.end(),
                     [op](const CollectiveRun& r) { return r.op == op; });
}

std::optional<double> MeasuredCollectives::BusBandwidth(CollectiveOp op,
                                                        int64_t ranks,
                                                        double bytes) const {
  const CollectiveRun* below = nullptr;  // the most ranks <= `ranks`
  const CollectiveRun* above = nullptr;  // the fewest ranks >= `ranks`
  for (const CollectiveRun& r : runs_) {
    if (r.op != op) continue;
    if (r.ranks <= ranks && (below == nullptr || r.ranks > below->ranks)) {
      below = &r;
    }
    if (r.ranks >= ranks && (above == nullptr || r.ranks < above->ranks)) {
      above = &r;
    }
  }
  if (below == nullptr && above == nullptr) return std::nullopt;
  if (below == nullptr) return RunBusBandwidth(*above, bytes);
  if (above == nullptr || above == below) return RunBusBandwidth(*below, bytes);
  const double w = (std::log2(static_cast<double>(ranks)) -
                    std::log2(static_cast<double>(below->ranks))) /
                   (std::log2(static_cast<double>(above->ranks)) -
                    std::log2(static_cast<double>(below->ranks)));
  return (1 - w) * RunBusBandwidth(*below, bytes) +
         w * RunBusBandwidth(*above, bytes);
}

std::optional<double> MeasuredCollectives::Seconds(CollectiveOp op,
                                                   int64_t ranks,
                                                   double bytes) const {
  for (const CollectiveRun& r : runs_) {
    if (r.op == op && r.ranks == ranks) return RunSeconds(r, bytes);
  }
  const std::optional<double> bw = BusBandwidth(op, ranks, bytes);
  if (!bw) return std::nullopt;
  return BusFactor(op, ranks) * bytes / *bw;
}

std::string MeasuredCollectives::Summary() const {
  std::map<std::string, std::vector<int64_t>> ranks;
  for (const CollectiveRun& r : runs_) {
    ranks[CollectiveOpName(r.op)].push_back(r.ranks);
  }
  std::vector<std::string> parts;
  for (auto& [op, counts] : ranks) {
    std::sort(counts.begin(), counts.end());
    parts.push_back(absl::StrCat(op, " at ", absl::StrJoin(counts, ", "),
                                 " ranks"));
  }
  return absl::StrJoin(parts, "; ");
}

std::optional<FittedLink> FitAllReduceLink(const MeasuredCollectives& m,
                                           int64_t ranks, double small_bytes,
                                           double large_bytes) {
  if (ranks < 2) return std::nullopt;
  const std::optional<double> t_large =
      m.Seconds(CollectiveOp::kAllReduce, ranks, large_bytes);
  if (!t_large) return std::nullopt;
  const double f = BusFactor(CollectiveOp::kAllReduce, ranks);
  const double steps = 2.0 * static_cast<double>(ranks - 1);
  // B from the large size alone; no latency, or none known.
  FittedLink alone{f * large_bytes / *t_large, 0};
  double smallest = 0;
  for (const CollectiveRun& r : m.runs()) {
    if (r.op != CollectiveOp::kAllReduce) continue;
    if (smallest == 0 || r.points.front().bytes < smallest) {
      smallest = r.points.front().bytes;
    }
  }
  if (small_bytes < smallest) alone.latency_s = std::nullopt;
  if (!(small_bytes > 0) || !(small_bytes < large_bytes) ||
      small_bytes < smallest) {
    return alone;
  }
  const double t_small =
      *m.Seconds(CollectiveOp::kAllReduce, ranks, small_bytes);
  const double slope = (*t_large - t_small) / (large_bytes - small_bytes);
  if (!(slope > 0)) return alone;
  const double intercept = t_small - slope * small_bytes;
  if (intercept < 0) return alone;
  return FittedLink{f / slope, intercept / steps};
}

}  // namespace ringside
