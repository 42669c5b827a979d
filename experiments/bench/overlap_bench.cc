// overlap_bench: what pushing during backward buys the dps strategy.
// Runs the real training loop (N worker threads, K in-process parameter
// servers on loopback) with SyncOptions::overlap off and on, interleaved
// over --repeats so both see the same machine noise, and prints mean step
// time, sync time per step and the on/off ratio.
//
//   bazel run //experiments/bench:overlap_bench -- --workers=2 --servers=2
#include <glog/logging.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "models/model_factory.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/ps_options.h"
#include "worker/trainer.h"

ABSL_FLAG(int, workers, 2, "Workers (threads).");
ABSL_FLAG(int, servers, 2, "Parameter servers (K).");
ABSL_FLAG(std::vector<std::string>, mlp_widths,
          std::vector<std::string>({"64", "1024", "1024", "1024", "10"}),
          "MLP widths.");
ABSL_FLAG(int64_t, batch_size, 32, "Examples per worker per step.");
ABSL_FLAG(int64_t, steps, 30, "Steps per run.");
ABSL_FLAG(int64_t, warmup_steps, 5, "Unmeasured leading steps.");
// --chunk_kb: the workers' flag (worker/strategies/ps/ps_options.h).
ABSL_FLAG(int, repeats, 3, "Runs per mode, interleaved.");

namespace ringside {
namespace {

struct Measure {
  double step_s = 0;  // mean over ranks of wall / measured steps
  double sync_s = 0;  // mean over ranks of (wall - compute) / measured steps
};

absl::StatusOr<Measure> RunOnce(bool overlap, const ModelOptions& model) {
  const int n = absl::GetFlag(FLAGS_workers);
  const int k = absl::GetFlag(FLAGS_servers);
  RS_ASSIGN_OR_RETURN(
      std::unique_ptr<LocalPsCluster> servers,
      LocalPsCluster::Start(k, n, PsServiceOptions().max_pull_wait));
  SyncOptions sync;
  sync.overlap = overlap;
  RS_ASSIGN_OR_RETURN(PsOptions ps, PsOptionsFromFlags());
  sync.strategy.Set(ps);
  sync.servers = servers->addresses();
  TrainerOptions trainer;
  trainer.batch_size = absl::GetFlag(FLAGS_batch_size);
  trainer.steps = absl::GetFlag(FLAGS_steps);
  trainer.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  std::vector<absl::StatusOr<TrainResult>> results(
      n, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      results[r] = [&]() -> absl::StatusOr<TrainResult> {
        RS_ASSIGN_OR_RETURN(ModelBundle bundle, MakeModel(model));
        RS_ASSIGN_OR_RETURN(std::unique_ptr<SyncStrategy> dps,
                            StrategyRegistry::Create("dps"));
        TrainJob job;
        job.dataset = bundle.dataset.get();
        job.strategy = dps.get();
        job.rank = RankInfo{r, n};
        job.sync = sync;
        job.options = trainer;
        return Train(*bundle.model, job);
      }();
    });
  }
  for (std::thread& t : threads) t.join();
  Measure m;
  for (const auto& result : results) {
    RS_RETURN_IF_ERROR(result.status());
    const auto& f = result->final_record;
    const double steps = f["measured_steps"].get<double>();
    m.step_s += f["wall_s"].get<double>() / steps / n;
    m.sync_s +=
        (f["wall_s"].get<double>() - f["compute_s"].get<double>()) / steps / n;
  }
  return m;
}

absl::Status Run() {
  ModelOptions model;
  model.mlp_widths.clear();
  for (const std::string& w : absl::GetFlag(FLAGS_mlp_widths)) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(w, &v)) {
      return absl::InvalidArgumentError("bad --mlp_widths entry " + w);
    }
    model.mlp_widths.push_back(v);
  }
  Measure sum[2];
  for (int rep = 0; rep < absl::GetFlag(FLAGS_repeats); ++rep) {
    for (int overlap = 0; overlap < 2; ++overlap) {
      RS_ASSIGN_OR_RETURN(Measure m, RunOnce(overlap == 1, model));
      sum[overlap].step_s += m.step_s;
      sum[overlap].sync_s += m.sync_s;
    }
  }
  const int reps = absl::GetFlag(FLAGS_repeats);
  absl::PrintF(
      "overlap_bench: dps, %d workers, %d servers, %u cores, %d repeats\n",
      absl::GetFlag(FLAGS_workers), absl::GetFlag(FLAGS_servers),
      std::thread::hardware_concurrency(), reps);
  absl::PrintF("| overlap | step (ms) | sync (ms/step) |\n|---|---|---|\n");
  for (int o = 0; o < 2; ++o) {
    absl::PrintF("| %s | %.2f | %.2f |\n", o ? "on" : "off",
                 1e3 * sum[o].step_s / reps, 1e3 * sum[o].sync_s / reps);
  }
  absl::PrintF("step time on/off: %.3f; sync time on/off: %.3f\n",
               sum[1].step_s / sum[0].step_s, sum[1].sync_s / sum[0].sync_s);
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
