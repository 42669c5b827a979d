// transport_bench: goodput of the parameter-server transports (the real
// PsSession push+pull path over gRPC, and over the servers' bulk data path,
// --ps_transport=tcp) against a plain TCP stream measured in the same run,
// and step time against the number of servers K.
//
//   bazel run //experiments/bench:transport_bench -- --model_mb=64
//
// Section 1: N in --workers, one server: push+pull goodput (payload bytes in
// both directions / s) for sps over gRPC ("ps/grpc") and over the bulk path
// ("ps/tcp"), for N TCP connections that send and echo back the same bytes
// ("tcp"), and for the same chunks over bare gRPC streams
// (experiments/cost/grpc_bulk.h); each ratio to tcp is taken within one
// repeat (the four measured back to back), and printed as the median and
// the range over --repeats. Each measurement is a window of at least
// --steps steps and --min_window_s seconds (the measurement protocol,
// docs/DESIGN.md): a probe run of --steps steps per path, not counted,
// sizes its steps.
// Section 2: --shard_workers workers, K in --shard_counts servers: push+pull
// time per step, its ratio to K=1 (= sps), and the cost model's ratio
// max(M/B, n·M/(K·B)) / (n·M/B) = max(1/n, 1/K) beside it. On a host whose
// cores are fewer than workers + servers the CPU, not the link, is the
// bottleneck, and the model's bandwidth assumption does not hold.
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/barrier.h"
#include "common/json_lines.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "experiments/cost/grpc_bulk.h"
#include "experiments/cost/tcp_echo.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/local_ps_worker.h"
#include "worker/strategies/ps/ps_options.h"
#include "worker/strategies/ps/ps_session.h"

ABSL_FLAG(int64_t, model_mb, 64, "Model size (MiB of float32 parameters).");
ABSL_FLAG(int, tensors, 16, "Tensors the model is cut into.");
ABSL_FLAG(std::vector<std::string>, workers,
          std::vector<std::string>({"1", "4"}),
          "Worker counts for the goodput section.");
ABSL_FLAG(int, shard_workers, 4, "Workers in the sharding section.");
ABSL_FLAG(std::vector<std::string>, shard_counts,
          std::vector<std::string>({"1", "2", "4"}),
          "Server counts K for the sharding section (empty to skip).");
ABSL_FLAG(int, steps, 4, "Measured steps per configuration.");
ABSL_FLAG(int, warmup_steps, 1, "Unmeasured steps first.");
ABSL_FLAG(double, min_window_s, 2.0,
          "The goodput section's measured window per path and repeat, at "
          "least (seconds; 0: exactly --steps steps): the steps are sized "
          "from a probe run of --steps steps.");
ABSL_FLAG(int, repeats, 3,
          "Repeats of the goodput section's measurements (ratios: median and "
          "range).");
// --chunk_kb, --ps_transport (the sharding section): the workers' flags
// (worker/strategies/ps/ps_options.h).
ABSL_FLAG(std::string, json_out, "", "Also write one JSON line per row here.");

namespace ringside {
namespace {

struct PsResult {
  double seconds = 0;  // measured steps, slowest worker
  int64_t bytes_moved = 0;
};

// N workers (threads) against K in-process servers, `steps` push+pull steps.
// `transport`: PsOptions::transport ("grpc" or "tcp").
absl::StatusOr<PsResult> RunPs(int n, int k, const TensorLayout& layout,
                               int steps, int warmup,
                               const std::string& transport) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<LocalPsCluster> servers,
                      LocalPsCluster::Start(k, n, absl::Seconds(300)));
  SyncOptions sync;
  RS_ASSIGN_OR_RETURN(PsOptions ps, PsOptionsFromFlags());
  ps.transport = transport;
  sync.strategy.Set(ps);
  sync.rpc_timeout = absl::Seconds(300);
  sync.servers = servers->addresses();
  std::vector<absl::Status> status(n);
  std::vector<double> seconds(n, 0);
  std::vector<int64_t> bytes(n, 0);
  absl::Barrier start(n), end(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      OptimizerConfig plain_sgd;
      plain_sgd.momentum = 0;
      absl::StatusOr<std::unique_ptr<LocalPsWorker>> worker =
          LocalPsWorker::Start(layout, r, n, sync, plain_sgd);
      bool failed = !worker.ok();
      if (failed) status[r] = worker.status();
      Stopwatch watch;
      for (int t = 0; t < warmup + steps; ++t) {
        if (t == warmup) {
          start.Block();
          watch.Reset();
        }
        if (failed) continue;
        absl::StatusOr<StepStats> stats = (*worker)->session().FinishStep(t);
        if (!stats.ok()) {
          status[r] = stats.status();
          failed = true;
        } else if (t >= warmup) {
          bytes[r] += stats->bytes_sent + stats->bytes_received;
        }
      }
      end.Block();
      seconds[r] = watch.ElapsedSeconds();
      if (!failed) status[r] = (*worker)->session().Shutdown();
    });
  }
  for (std::thread& t : threads) t.join();
  PsResult result;
  for (int r = 0; r < n; ++r) {
    RS_RETURN_IF_ERROR(status[r]);
    result.seconds = std::max(result.seconds, seconds[r]);
    result.bytes_moved += bytes[r];
  }
  return result;
}

// Steps for a window of at least `min_window_s` seconds and `min_steps`
// steps, from a probe of `probe_steps` steps that took `probe_s`, with a
// tenth to spare (a probe's steps run a little faster than a long
// window's).
int WindowSteps(double probe_s, int probe_steps, int min_steps,
                double min_window_s) {
  if (min_window_s <= 0 || probe_s <= 0) return min_steps;
  const double per_step = probe_s / probe_steps;
  const double wanted = std::ceil(1.1 * min_window_s / per_step);
  return static_cast<int>(std::clamp<double>(wanted, min_steps, 1e6));
}

absl::StatusOr<std::vector<int>> Ints(const std::vector<std::string>& texts) {
  std::vector<int> out;
  for (const std::string& t : texts) {
    int v = 0;
    if (!absl::SimpleAtoi(t, &v) || v < 1) {
      return absl::InvalidArgumentError("bad count '" + t + "'");
    }
    out.push_back(v);
  }
  return out;
}

absl::Status Run() {
  const int64_t model_bytes = absl::GetFlag(FLAGS_model_mb) << 20;
  const int tensors = absl::GetFlag(FLAGS_tensors);
  const int steps = absl::GetFlag(FLAGS_steps);
  const int warmup = absl::GetFlag(FLAGS_warmup_steps);
  if (model_bytes <= 0 || tensors < 1 || steps < 1 || warmup < 0) {
    return absl::InvalidArgumentError("bad --model_mb/--tensors/--steps");
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (int i = 0; i < tensors; ++i) {
    shapes.push_back({absl::StrCat("t", i), {model_bytes / 4 / tensors}});
  }
  RS_ASSIGN_OR_RETURN(TensorLayout layout, TensorLayout::FromShapes(shapes));
  const double mb = layout.total_bytes() / 1048576.0;
  RS_ASSIGN_OR_RETURN(const PsOptions ps, PsOptionsFromFlags());
  // --json_out: one JSON line per row; the file closes when Run returns.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr,
                                                            &std::fclose);
  std::unique_ptr<JsonLinesWriter> json;
  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    json_file.reset(std::fopen(absl::GetFlag(FLAGS_json_out).c_str(), "w"));
    if (json_file == nullptr) {
      return absl::UnavailableError("cannot open --json_out");
    }
    json = std::make_unique<JsonLinesWriter>(json_file.get());
  }
  const unsigned cores = std::thread::hardware_concurrency();
  absl::PrintF(
      "transport_bench: %.0f MiB model in %d tensors, %s chunks, windows "
      "of at least %d measured steps and %.1f s (+%d warm-up steps), "
      "loopback, %u cores\n\n",
      mb, tensors,
      ps.chunk_bytes > 0 ? absl::StrCat(ps.chunk_bytes / 1024, " KiB")
          : "auto-sized (AutoChunkBytes)",
      steps, absl::GetFlag(FLAGS_min_window_s), warmup, cores);

  const int repeats = absl::GetFlag(FLAGS_repeats);
  if (repeats < 1) return absl::InvalidArgumentError("bad --repeats");
  absl::PrintF(
      "Push+pull goodput, one server (sps) over gRPC and over the bulk path "
      "vs plain TCP echo and vs bare gRPC (the same chunks over gRPC "
      "streams, no parameter server); ratios: median (range) over %d "
      "repeats\n",
      repeats);
  absl::PrintF(
      "| workers | ps/grpc GB/s | ps/tcp GB/s | tcp GB/s | bare grpc GB/s | "
      "ps/grpc ÷ tcp | ps/tcp ÷ tcp | bare grpc ÷ tcp | steps: ps/grpc, "
      "ps/tcp, tcp, bare grpc (windows) |\n");
  absl::PrintF("|---|---|---|---|---|---|---|---|---|\n");
  const int64_t chunk_bytes =
      ps.chunk_bytes > 0
          ? ps.chunk_bytes
          : AutoChunkBytes(layout.total_bytes(), /*num_servers=*/1);
  RS_ASSIGN_OR_RETURN(std::vector<int> worker_counts,
                      Ints(absl::GetFlag(FLAGS_workers)));
  // Median and range of `v` ("0.91 (0.88–0.95)").
  auto spread = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return absl::StrFormat("%.2f (%.2f–%.2f)", v[v.size() / 2], v.front(),
                           v.back());
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double min_window_s = absl::GetFlag(FLAGS_min_window_s);
  for (int n : worker_counts) {
    // The four paths, each a function of its step count: seconds and bytes.
    using Path = std::function<absl::StatusOr<PsResult>(int)>;
    const std::vector<Path> paths = {
        [&](int s) { return RunPs(n, 1, layout, s, warmup, "grpc"); },
        [&](int s) { return RunPs(n, 1, layout, s, warmup, "tcp"); },
        [&](int s) -> absl::StatusOr<PsResult> {
          RS_ASSIGN_OR_RETURN(TcpEchoResult r,
                              RunTcpEcho(n, layout.total_bytes(), s, warmup,
                                         absl::Seconds(300)));
          return PsResult{r.seconds, r.bytes_moved};
        },
        [&](int s) -> absl::StatusOr<PsResult> {
          RS_ASSIGN_OR_RETURN(
              GrpcBulkResult r,
              RunGrpcBulk(n, layout.total_bytes(), chunk_bytes, s, warmup,
                          absl::Seconds(300)));
          return PsResult{r.seconds, r.bytes_moved};
        }};
    std::vector<int> path_steps;
    for (const Path& path : paths) {
      int sized = steps;
      if (min_window_s > 0) {
        RS_ASSIGN_OR_RETURN(PsResult probe, path(steps));
        sized = WindowSteps(probe.seconds, steps, steps, min_window_s);
      }
      path_steps.push_back(sized);
    }
    // Goodput (GB/s) per path, one entry per repeat.
    std::vector<std::vector<double>> gbps(paths.size());
    std::vector<double> window_s;
    for (int r = 0; r < repeats; ++r) {
      for (size_t i = 0; i < paths.size(); ++i) {
        RS_ASSIGN_OR_RETURN(PsResult result, paths[i](path_steps[i]));
        gbps[i].push_back(result.bytes_moved / result.seconds / 1e9);
        window_s.push_back(result.seconds);
        // A window that came out short (the probe ran faster than the
        // steady state) sizes the next repeat's.
        path_steps[i] = std::max(
            path_steps[i], WindowSteps(result.seconds, path_steps[i],
                                       path_steps[i], min_window_s));
      }
    }
    const std::vector<double>& grpc_ps = gbps[0];
    const std::vector<double>& tcp_ps = gbps[1];
    const std::vector<double>& tcp_echo = gbps[2];
    const std::vector<double>& bare = gbps[3];
    std::vector<double> grpc_ratio, tcp_ratio, bare_ratio;
    for (int r = 0; r < repeats; ++r) {
      grpc_ratio.push_back(grpc_ps[r] / tcp_echo[r]);
      tcp_ratio.push_back(tcp_ps[r] / tcp_echo[r]);
      bare_ratio.push_back(bare[r] / tcp_echo[r]);
    }
    const auto [shortest, longest] =
        std::minmax_element(window_s.begin(), window_s.end());
    absl::PrintF(
        "| %d | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %d, %d, %d, %d "
        "(%.1f–%.1f s) |\n",
        n, median(grpc_ps), median(tcp_ps), median(tcp_echo), median(bare),
        spread(grpc_ratio), spread(tcp_ratio), spread(bare_ratio),
        path_steps[0], path_steps[1], path_steps[2], path_steps[3], *shortest,
        *longest);
    if (json) {
      json->Write({{"section", "goodput"},
                   {"workers", n},
                   {"repeats", repeats},
                   {"steps", path_steps},
                   {"window_s", {*shortest, *longest}},
                   {"ps_grpc_gbps", median(grpc_ps)},
                   {"ps_tcp_gbps", median(tcp_ps)},
                   {"tcp_gbps", median(tcp_echo)},
                   {"grpc_gbps", median(bare)},
                   {"ps_grpc_ratio", grpc_ratio},
                   {"ps_tcp_ratio", tcp_ratio},
                   {"grpc_ratio", bare_ratio}});
    }
  }

  RS_ASSIGN_OR_RETURN(std::vector<int> shard_counts,
                      Ints(absl::GetFlag(FLAGS_shard_counts)));
  if (!shard_counts.empty()) {
    const int n = absl::GetFlag(FLAGS_shard_workers);
    absl::PrintF(
        "\nPush+pull time per step, %d workers, K servers (K=1 is sps), over "
        "%s\n",
        n, ps.transport);
    absl::PrintF("| K | step (s) | vs first K | cost model ratio | GB/s |\n");
    absl::PrintF("|---|---|---|---|---|\n");
    double first_step_s = 0;
    const double first_model = std::max(1.0 / n, 1.0 / shard_counts[0]);
    for (int k : shard_counts) {
      RS_ASSIGN_OR_RETURN(PsResult result,
                          RunPs(n, k, layout, steps, warmup, ps.transport));
      const double step_s = result.seconds / steps;
      if (first_step_s == 0) first_step_s = step_s;
      const double model = std::max(1.0 / n, 1.0 / k) / first_model;
      absl::PrintF("| %d | %.3f | %.2f | %.2f | %.2f |\n", k, step_s,
                   step_s / first_step_s, model,
                   result.bytes_moved / result.seconds / 1e9);
      if (json) {
        json->Write({{"section", "sharding"},
                     {"workers", n},
                     {"servers", k},
                     {"step_s", step_s},
                     {"ratio_vs_first", step_s / first_step_s},
                     {"cost_model_ratio", model}});
      }
    }
    if (static_cast<unsigned>(n + shard_counts.back()) > cores) {
      absl::PrintF(
          "\nNote: %d workers + up to %d servers ran on %u cores; the CPU, "
          "not the link, bounds these times, so the bandwidth cost model "
          "does not apply here.\n",
          n, shard_counts.back(), cores);
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  absl::Status s = ringside::Run();
  if (!s.ok()) {
    LOG(ERROR) << s;
    return 1;
  }
  return 0;
}
