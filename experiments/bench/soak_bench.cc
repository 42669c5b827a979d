// soak_bench: a long synchronous job against one parameter server (sps) and
// against K sharded ones (dps), checking that nothing is lost, nothing is
// applied twice and the servers' memory stays flat.
//
//   bazel run //experiments/bench:soak_bench -- --workers=8 --steps=1000 --servers=4
//
// For each run it reads the servers' lines: {"event":"server_stats"} every
// --stats_every_steps (resident memory, version) and {"event":
// "server_final"} with the update accounting (pushes accepted per (rank,
// chunk), optimizer steps per chunk, refused duplicates). Verdicts:
//   - updates: every (rank, chunk) pushed exactly `steps` times and every
//     chunk stepped exactly `steps` times on every shard (lost = missing
//     pushes, duplicated = surplus ones), no push refused;
//   - parameters: every worker's final parameters equal those of one
//     baseline worker with batch N·b (relative L2 <= --tolerance);
//   - memory: each server's resident memory after warm-up (version >=
//     steps/10) stays within --rss_growth_limit of its first sample.
// Prints a table and one PASS/FAIL line per check; exit 0 iff all pass.
//
// Float32 rounding over 1000 steps: the servers sum the N gradients in the
// order they arrive and the reference computes the batch in one GEMM, so
// the two trajectories differ by rounding (~1e-7). With many ReLU units a
// pre-activation within that distance of zero sooner or later flips, and
// the runs part by ~1e-3 for good: with --mlp_widths=32,64,64,10 --lr=0.01
// a ring job (a fixed reduction order, no server) ends 2.57e-3 from the
// reference, the same figure in every run, and sps/dps land on either side
// depending on arrival order, with zero lost updates. Hence the small
// default hidden layer, where no flip happened in 13 runs of each; the
// per-(rank, chunk) accounting above is the exact check for lost updates.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "experiments/job/job_binaries.h"
#include "experiments/job/local_job.h"

ABSL_FLAG(int, workers, 8, "Workers N.");
ABSL_FLAG(int, steps, 1000, "Training steps of every run.");
ABSL_FLAG(int, servers, 4, "Servers K of the dps run (sps: 1).");
ABSL_FLAG(std::string, strategies, "sps,dps", "Runs: sps and/or dps.");
ABSL_FLAG(int, batch_size, 8, "Local batch b (the reference uses N·b).");
ABSL_FLAG(std::string, mlp_widths, "16,32,10",
          "MLP widths (a small hidden layer: see the note on float32 "
          "rounding above).");
ABSL_FLAG(double, lr, 0.01, "SGD learning rate.");
ABSL_FLAG(int, chunk_kb, 1, "Parameter-server chunk (KiB): several chunks "
                            "per shard, so per-chunk accounting matters.");
ABSL_FLAG(int, stats_every_steps, 50, "Server memory sample period (steps).");
ABSL_FLAG(double, tolerance, 1e-5,
          "Largest relative L2 distance of a worker's final parameters from "
          "the reference.");
ABSL_FLAG(double, rss_growth_limit, 1.10,
          "Largest ratio of a server's resident memory to its first sample "
          "after warm-up.");
ABSL_FLAG(double, failure_timeout_s, 30, "Passed to workers and servers.");
ABSL_FLAG(absl::Duration, deadline, absl::Minutes(30), "Limit of each run.");
ABSL_FLAG(std::string, work_dir, "",
          "Where the parameter files go; default: a fresh folder in /tmp.");
ABSL_FLAG(std::string, json_out, "", "Also write the results here (JSON).");
ABSL_FLAG(bool, verbose, false, "Relay every process's log lines.");

namespace ringside {
namespace {

using nlohmann::json;

absl::StatusOr<std::vector<float>> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

struct Distance {
  double relative_l2 = 0;
  double max_abs = 0;
};

Distance Compare(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  Distance d;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = static_cast<double>(a[i]) - b[i];
    diff += e * e;
    norm += static_cast<double>(b[i]) * b[i];
    d.max_abs = std::max(d.max_abs, std::abs(e));
  }
  d.relative_l2 = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  return d;
}

struct Sample {
  int64_t version;
  int64_t rss;
};

// What one run produced and what the checks found.
struct RunResult {
  std::string strategy;
  int servers = 0;
  double wall_s = 0;
  int64_t expected_pushes = 0;  // per rank, all shards: steps × chunks
  int64_t accepted = 0, lost = 0, duplicated = 0, refused = 0;
  int64_t chunks = 0;
  bool counts_exact = true;  // every (rank, chunk) and chunk == steps
  int64_t min_version = 0, max_version = 0;
  Distance worst;            // over ranks, vs the reference
  bool ranks_identical = true;
  std::map<int, std::vector<Sample>> rss;  // per shard
  double rss_first = 0, rss_last = 0, rss_max = 0, rss_ratio = 0;
  double rss_max_ratio = 0;
  std::vector<std::string> failures;
};

std::string Mib(double bytes) {
  return absl::StrFormat("%.1f", bytes / (1 << 20));
}

// Runs one strategy; fills everything but the parameter comparison.
absl::Status RunOne(LocalJobOptions options, int steps, RunResult& r) {
  std::map<int, json> finals;
  options.on_server_record = [&](int shard, absl::string_view,
                                 const json& record) {
    const std::string event = record.value("event", "");
    if (event == "server_stats") {
      r.rss[shard].push_back({record.value("version", int64_t{-1}),
                              record.value("rss_bytes", int64_t{0})});
    } else if (event == "server_final") {
      finals[shard] = record;
    }
  };
  absl::StatusOr<LocalJobResult> job = RunLocalJob(options);
  if (!job.ok()) return job.status();
  r.wall_s = job->wall_s;
  for (const std::string& w : job->warnings) {
    std::fprintf(stderr, "soak_bench: warning: %s\n", w.c_str());
  }
  if (static_cast<int>(finals.size()) != options.num_servers) {
    return absl::DataLossError(
        absl::StrCat(finals.size(), " of ", options.num_servers,
                     " servers printed their server_final line"));
  }
  r.min_version = steps;
  r.max_version = steps;
  std::vector<int64_t> per_rank(options.num_workers, 0);
  int64_t chunks = 0;
  for (const auto& [shard, f] : finals) {
    const json& u = f.at("updates");
    const int64_t c = u.at("chunks").get<int64_t>();
    chunks += c;
    const std::vector<int64_t> pushes =
        u.at("pushes_per_rank").get<std::vector<int64_t>>();
    for (size_t rank = 0; rank < pushes.size() && rank < per_rank.size();
         ++rank) {
      per_rank[rank] += pushes[rank];
      const int64_t want = c * steps;
      r.lost += std::max<int64_t>(0, want - pushes[rank]);
      r.duplicated += std::max<int64_t>(0, pushes[rank] - want);
    }
    r.refused += u.at("duplicates_refused").get<int64_t>() +
                 u.at("wrong_step_refused").get<int64_t>();
    for (const char* key : {"pushes_min", "pushes_max", "applied_min",
                            "applied_max", "min_version", "max_version"}) {
      if (u.at(key).get<int64_t>() != steps) r.counts_exact = false;
    }
    r.min_version = std::min(r.min_version, u.at("min_version").get<int64_t>());
    r.max_version = std::max(r.max_version, u.at("max_version").get<int64_t>());
  }
  r.chunks = chunks;
  r.expected_pushes = chunks * steps;
  for (int64_t n : per_rank) r.accepted += n;

  // Memory: per shard, first sample after warm-up, last, max.
  const int64_t warm = steps / 10;
  for (const auto& [shard, samples] : r.rss) {
    std::vector<Sample> after;
    for (const Sample& s : samples) {
      if (s.version >= warm) after.push_back(s);
    }
    if (after.empty()) continue;
    double first = after.front().rss, last = after.back().rss, peak = 0;
    for (const Sample& s : after) peak = std::max<double>(peak, s.rss);
    // The run's figures are those of the shard that grew the most.
    if (last / first > r.rss_ratio || r.rss_first == 0) {
      r.rss_first = first;
      r.rss_last = last;
      r.rss_max = peak;
      r.rss_ratio = last / first;
    }
    r.rss_max_ratio = std::max(r.rss_max_ratio, peak / first);
  }
  return absl::OkStatus();
}

int Run(const char* argv0) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "soak_bench: %s\n", s.ToString().c_str());
    return 2;
  };
  absl::StatusOr<std::string> worker_bin = WorkerBinary(argv0);
  if (!worker_bin.ok()) return fail(worker_bin.status());
  absl::StatusOr<std::string> ps_bin = PsServerBinary(argv0);
  if (!ps_bin.ok()) return fail(ps_bin.status());

  const int n = absl::GetFlag(FLAGS_workers);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int b = absl::GetFlag(FLAGS_batch_size);
  const int k = absl::GetFlag(FLAGS_servers);
  if (n < 1 || steps < 20 || b < 1 || k < 1) {
    return fail(absl::InvalidArgumentError(
        "need --workers >= 1, --steps >= 20, --batch_size >= 1, --servers >= 1"));
  }
  std::string dir = absl::GetFlag(FLAGS_work_dir);
  if (dir.empty()) {
    char pattern[] = "/tmp/soak_bench.XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      return fail(absl::InternalError("cannot create a folder in /tmp"));
    }
    dir = pattern;
  }
  std::filesystem::create_directories(dir);
  const std::string failure_timeout = absl::StrCat(
      "--failure_timeout_s=", absl::GetFlag(FLAGS_failure_timeout_s));
  const std::vector<std::string> common = {
      "--model=mlp",
      absl::StrCat("--mlp_widths=", absl::GetFlag(FLAGS_mlp_widths)),
      absl::StrCat("--steps=", steps),
      "--optimizer=sgd",
      absl::StrCat("--lr=", absl::GetFlag(FLAGS_lr)),
      absl::StrCat("--chunk_kb=", absl::GetFlag(FLAGS_chunk_kb)),
      failure_timeout};

  LocalJobOptions base;
  base.worker_bin = *worker_bin;
  base.ps_server_bin = *ps_bin;
  base.deadline = absl::GetFlag(FLAGS_deadline);
  base.relay_stderr = absl::GetFlag(FLAGS_verbose);

  // The reference: one worker with the global batch.
  std::fprintf(stderr, "[ref] baseline: 1 worker, batch %d, %d steps\n", n * b,
               steps);
  const std::string ref_path = dir + "/reference.bin";
  LocalJobOptions ref = base;
  ref.strategy = "baseline";
  ref.worker_args = common;
  ref.worker_args.push_back(absl::StrCat("--batch_size=", n * b));
  ref.worker_args.push_back(absl::StrCat("--save_params=", ref_path));
  absl::StatusOr<LocalJobResult> ref_job = RunLocalJob(ref);
  if (!ref_job.ok()) return fail(ref_job.status());
  absl::StatusOr<std::vector<float>> reference = ReadFloats(ref_path);
  if (!reference.ok()) return fail(reference.status());
  std::fprintf(stderr, "[ref] %.1f s\n", ref_job->wall_s);

  const double tolerance = absl::GetFlag(FLAGS_tolerance);
  const double growth = absl::GetFlag(FLAGS_rss_growth_limit);
  std::vector<RunResult> results;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_strategies), ',',
                      absl::SkipWhitespace())) {
    RunResult r;
    r.strategy = std::string(name);
    r.servers = r.strategy == "sps" ? 1 : k;
    LocalJobOptions options = base;
    options.strategy = r.strategy;
    options.num_workers = n;
    options.num_servers = r.servers;
    options.worker_args = common;
    options.worker_args.push_back(absl::StrCat("--batch_size=", b));
    options.worker_args.push_back(absl::StrCat(
        "--save_params=", dir, "/", r.strategy, ".rank{rank}.bin"));
    options.server_args = {
        absl::StrCat("--stats_every_steps=",
                     absl::GetFlag(FLAGS_stats_every_steps)),
        failure_timeout};
    std::fprintf(stderr, "[%s] %d workers x %d steps, %d server(s)\n",
                 r.strategy.c_str(), n, steps, r.servers);
    if (absl::Status s = RunOne(options, steps, r); !s.ok()) {
      r.failures.push_back(absl::StrCat("run failed: ", s.ToString()));
      results.push_back(r);
      continue;
    }
    std::fprintf(stderr, "[%s] %.1f s\n", r.strategy.c_str(), r.wall_s);
    std::vector<float> first;
    for (int rank = 0; rank < n; ++rank) {
      absl::StatusOr<std::vector<float>> params = ReadFloats(
          absl::StrCat(dir, "/", r.strategy, ".rank", rank, ".bin"));
      if (!params.ok() || params->size() != reference->size()) {
        r.failures.push_back(absl::StrCat("rank ", rank, ": no parameters"));
        continue;
      }
      if (rank == 0) first = *params;
      r.ranks_identical = r.ranks_identical && *params == first;
      const Distance d = Compare(*params, *reference);
      r.worst.relative_l2 = std::max(r.worst.relative_l2, d.relative_l2);
      r.worst.max_abs = std::max(r.worst.max_abs, d.max_abs);
    }
    results.push_back(r);
  }

  // Table.
  std::printf(
      "| run | servers | chunks | workers x steps | wall s | pushes accepted "
      "| lost | duplicated | refused | versions | params rel. L2 | max |diff| "
      "| server RSS MiB first / last / max | last/first | max/first |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const RunResult& r : results) {
    std::printf(
        "| %s | %d | %lld | %d x %d | %.1f | %lld | %lld | %lld | %lld | "
        "%lld..%lld | %.2e | %.2e | %s / %s / %s | %.3f | %.3f |\n",
        r.strategy.c_str(), r.servers, static_cast<long long>(r.chunks), n,
        steps, r.wall_s, static_cast<long long>(r.accepted),
        static_cast<long long>(r.lost), static_cast<long long>(r.duplicated),
        static_cast<long long>(r.refused),
        static_cast<long long>(r.min_version),
        static_cast<long long>(r.max_version), r.worst.relative_l2,
        r.worst.max_abs, Mib(r.rss_first).c_str(), Mib(r.rss_last).c_str(),
        Mib(r.rss_max).c_str(), r.rss_ratio, r.rss_max_ratio);
  }
  std::printf("\nServer memory samples (MiB at version):\n");
  for (const RunResult& r : results) {
    for (const auto& [shard, samples] : r.rss) {
      std::vector<std::string> cells;
      for (const Sample& s : samples) {
        cells.push_back(absl::StrCat(Mib(s.rss), "@", s.version));
      }
      std::printf("  %s shard %d: %s\n", r.strategy.c_str(), shard,
                  absl::StrJoin(cells, " ").c_str());
    }
  }
  std::printf("\n");

  // Verdicts.
  bool all_pass = true;
  json out = json::array();
  auto verdict = [&](bool pass, const std::string& what) {
    all_pass = all_pass && pass;
    std::printf("%s %s\n", pass ? "PASS" : "FAIL", what.c_str());
  };
  for (RunResult& r : results) {
    for (const std::string& f : r.failures) verdict(false, r.strategy + ": " + f);
    if (!r.failures.empty()) continue;
    verdict(r.lost == 0 && r.duplicated == 0 && r.refused == 0 &&
                r.counts_exact,
            absl::StrCat(r.strategy, ": updates: ", r.lost, " lost, ",
                         r.duplicated, " duplicated, ", r.refused,
                         " refused of ", r.accepted, " accepted (want ",
                         r.expected_pushes, " per rank = ", r.chunks,
                         " chunks x ", steps, " steps; every chunk at version ",
                         steps, ")"));
    verdict(r.worst.relative_l2 <= tolerance && r.ranks_identical,
            absl::StrFormat("%s: parameters of all %d ranks vs one worker with "
                            "batch %d: relative L2 %.2e (<= %.0e), max |diff| "
                            "%.2e, ranks identical: %s",
                            r.strategy, n, n * b, r.worst.relative_l2,
                            tolerance, r.worst.max_abs,
                            r.ranks_identical ? "yes" : "no"));
    verdict(r.rss_first > 0 && r.rss_max_ratio <= growth,
            absl::StrFormat("%s: server memory flat: RSS %s -> %s MiB (max %s)"
                            ", last/first %.3f, max/first %.3f (<= %.2f)",
                            r.strategy, Mib(r.rss_first), Mib(r.rss_last),
                            Mib(r.rss_max), r.rss_ratio, r.rss_max_ratio,
                            growth));
    json samples = json::object();
    for (const auto& [shard, s] : r.rss) {
      json list = json::array();
      for (const Sample& x : s) list.push_back({x.version, x.rss});
      samples[std::to_string(shard)] = list;
    }
    out.push_back({{"strategy", r.strategy},
                   {"servers", r.servers},
                   {"workers", n},
                   {"steps", steps},
                   {"wall_s", r.wall_s},
                   {"chunks", r.chunks},
                   {"accepted", r.accepted},
                   {"lost", r.lost},
                   {"duplicated", r.duplicated},
                   {"refused", r.refused},
                   {"relative_l2", r.worst.relative_l2},
                   {"max_abs_diff", r.worst.max_abs},
                   {"ranks_identical", r.ranks_identical},
                   {"rss_first", r.rss_first},
                   {"rss_last", r.rss_last},
                   {"rss_max", r.rss_max},
                   {"rss_samples", samples}});
  }
  if (const std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    std::ofstream(path) << out.dump(2) << "\n";
  }
  std::printf("%s\n", all_pass ? "soak_bench: PASS" : "soak_bench: FAIL");
  return all_pass ? 0 : 1;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Soak benchmark: N workers x S steps against one server (sps) and K "
      "servers (dps); lost/duplicated updates, parameters vs the reference, "
      "server memory over time.");
  absl::ParseCommandLine(argc, argv);
  return ringside::Run(argv[0]);
}
