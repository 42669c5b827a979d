#include "experiments/comparison/sweep_runner.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/machine_cpu.h"
#include "common/stopwatch.h"
#include "experiments/comparison/worker_args.h"
#include "experiments/comparison/ddp_row.h"
#include "experiments/report/prediction_report.h"
#include "experiments/report/progress.h"
#include "experiments/report/repeats.h"
#include "experiments/report/seed_runs.h"
#include "worker/stragglers.h"

namespace ringside::compare {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Which run of a row (repeats.h): its training run, the --steps steps every
// row shares, with evaluation (with --seeds, one per seed); or timing run
// `timing` (1-based) of --repeats, measuring `window_steps` steps after
// the warm-up, without.
struct RunPhase {
  int timing = 0;  // 0: the training run
  int64_t window_steps = 0;
  int seed = 0;  // a training run's --seed and --data_seed; 0: the workers'

  bool training() const { return timing == 0; }
};

// "1 worker", "4 workers".
std::string Count(int n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// The local job of run `run` of the plan (its flags, servers, network,
// timeline path).
LocalJobOptions JobOptions(const SweepPlan& plan, const Run& run,
                           const RunPhase& phase,
                           std::vector<std::string>* dropped) {
  const ListedStrategy& s = run.strategy;
  const int n = run.workers;
  LocalJobOptions options;
  options.ps_server_bin = plan.ps_server_bin;
  options.worker_bin = plan.worker_bin;
  options.strategy = s.name;
  options.num_workers = n;
  options.num_servers = ServersFor(s.servers, plan.servers);
  options.rendezvous = s.store;
  // The DDP peer's data comes from the baseline's worker.
  const ListedStrategy& worker_strategy =
      s.name == kDdpStrategy ? plan.strategies[0] : s;
  options.worker_args = WorkerArgsFor(worker_strategy, plan.registered,
                                      plan.worker_args, dropped);
  // The registry's study settings, except those the user's flags set.
  std::vector<std::string> study;
  for (const std::string& flag : worker_strategy.study_flags) {
    const std::string name = flag.substr(2, flag.find('=') - 2);
    if (!WorkerFlag(plan.worker_args, name.c_str()).has_value()) {
      study.push_back(flag);
    }
  }
  options.worker_args.insert(options.worker_args.begin(), study.begin(),
                             study.end());
  options.worker_args.insert(options.worker_args.end(), s.run_flags.begin(),
                             s.run_flags.end());
  // Straggler ranks beyond this run's workers are left out of it.
  for (auto it = options.worker_args.begin(); it != options.worker_args.end();
       ++it) {
    constexpr absl::string_view kSlow = "--slow_ranks=";
    if (!absl::StartsWith(*it, kSlow)) continue;
    const std::string kept = SlowRanksWithin(it->substr(kSlow.size()), n);
    if (kept.empty()) {
      options.worker_args.erase(it);
    } else {
      *it = absl::StrCat(kSlow, kept);
    }
    break;
  }
  if (phase.seed > 0) {
    options.worker_args.push_back(absl::StrCat("--seed=", phase.seed));
    options.worker_args.push_back(absl::StrCat("--data_seed=", phase.seed));
  }
  // A timing run: its window after the warm-up, no evaluation (last, so
  // they win over every flag before).
  if (!phase.training()) {
    int64_t warmup = plan.workload.warmup_steps;
    if (std::optional<std::string> given =
            WorkerFlag(options.worker_args, "warmup_steps");
        given && !absl::SimpleAtoi(*given, &warmup)) {
      warmup = plan.workload.warmup_steps;
    }
    options.worker_args.push_back(
        absl::StrCat("--steps=", warmup + phase.window_steps));
    options.worker_args.push_back("--eval_every=0");
  }
  options.server_args = plan.server_args;
  options.deadline = plan.job.deadline;
  options.security = plan.job.security;
  options.generate_auth_token = plan.job.generate_auth_token;
  options.relay_stderr = plan.job.relay_stderr;
  options.network = plan.network;
  options.servers_beside_rank0 = s.servers_beside_rank0;
  if (plan.job.timeline) {
    std::string stem = s.name;
    for (const std::string& flag : s.run_flags) {  // --staleness=2: _staleness2
      absl::StrAppend(
          &stem, "_",
          absl::StrReplaceAll(flag.substr(2), {{"=", ""}, {"/", ""}}));
    }
    if (s.servers_beside_rank0) absl::StrAppend(&stem, "_placementrank0");
    if (!(s.name == "baseline" || plan.sweep.size() == 1)) {
      absl::StrAppend(&stem, "_n", n);
    }
    if (phase.seed > 1) absl::StrAppend(&stem, "_seed", phase.seed);
    if (!phase.training()) absl::StrAppend(&stem, "_t", phase.timing);
    const std::string name = absl::StrCat("timeline_", stem, ".json");
    options.timeline = fs::absolute(plan.dir / name).string();
  }
  return options;
}

// The JSON fields that say which run of its row a run was.
void SetPhase(const RunPhase& phase, json* run) {
  (*run)["phase"] = phase.training() ? "training" : "timing";
  if (phase.seed > 0) (*run)["seed"] = phase.seed;
  if (!phase.training()) {
    (*run)["timing_run"] = phase.timing;
    (*run)["window_steps"] = phase.window_steps;
  }
}

// One run: run `i` of the plan in phase `phase`, the `index`-th of
// `total`, with a progress line before it and its result (or failure)
// after it on stderr; its JSON (and any failure) goes into `out`, with the
// CPU other processes used meanwhile, and the baseline's training run
// calibrates the cost model. The row, when it ran.
std::optional<ReportRow> RunOne(const SweepPlan& plan, int i,
                                const RunPhase& phase, int index, int total,
                                std::vector<double>* durations,
                                SweepOutcome* out) {
  const ListedStrategy& s = plan.runs[i].strategy;
  const int n = plan.runs[i].workers;
  std::vector<std::string> dropped;
  LocalJobOptions options = JobOptions(plan, plan.runs[i], phase, &dropped);
  std::vector<json> evals;  // rank 0's, for the loss curve
  options.on_record = [&evals](int rank, absl::string_view,
                               const json& record) {
    if (rank == 0 && IsEvalRecord(record)) evals.push_back(record);
  };
  if (!dropped.empty()) {
    out->ignored_flags[s.display_name] = absl::StrJoin(dropped, " ");
  }
  std::string what = absl::StrCat(s.name, " n=", n);
  json failure = {{"strategy", s.name}, {"workers", n}};
  SetPhase(phase, &failure);
  if (s.name == kDdpStrategy) {
    // The export holds every step's batches: one per n and step count.
    std::string name = absl::StrCat("ddp_data_n", n);
    if (!phase.training()) absl::StrAppend(&name, "_w", phase.window_steps);
    const std::string data = (plan.dir / name).string();
    if (plan.ddp->torch_model.empty() && out->ddp_data.count(data) == 0) {
      if (absl::Status e = ExportJobData(
              plan.worker_bin, n, options.worker_args, data, absl::Minutes(5));
          !e.ok()) {
        std::fprintf(stderr, "[%d/%d] PyTorch DDP n=%d FAILED: %s\n", index,
                     total, n, e.ToString().c_str());
        failure["error"] = e.ToString();
        out->failures.push_back(failure);
        return std::nullopt;
      }
      out->ddp_data.insert(data);
    }
    UseDdpPeer(*plan.ddp, data, &options);
  }
  if (options.num_servers > 0) {
    absl::StrAppend(&what, ", ", Count(options.num_servers, "server"));
  }
  if (phase.training()) {
    if (plan.repeats > 0) absl::StrAppend(&what, ", training run");
    if (phase.seed > 0) {
      absl::StrAppend(&what, ", seed ", phase.seed, " of ", plan.seeds);
    }
  } else {
    absl::StrAppend(&what, ", timing run ", phase.timing, " of ", plan.repeats,
                    " (", phase.window_steps, " steps)");
  }
  std::fprintf(stderr, "%s\n",
               ProgressLine(index, total, what, *durations).c_str());
  const Stopwatch clock;
  const absl::StatusOr<CpuSnapshot> cpu_before = TakeCpuSnapshot();
  absl::StatusOr<LocalJobResult> result = RunLocalJob(options);
  const absl::StatusOr<CpuSnapshot> cpu_after = TakeCpuSnapshot();
  durations->push_back(clock.ElapsedSeconds());
  std::optional<OtherCpuLoad> others;
  if (cpu_before.ok() && cpu_after.ok()) {
    others = OtherCpuBetween(*cpu_before, *cpu_after);
    out->most_other_cores = std::max(out->most_other_cores, others->cores);
    out->most_steal_cores =
        std::max(out->most_steal_cores, others->steal_cores);
    if (others->cores > kBusyOtherCores) {
      out->busy_runs.emplace_back(what, others->cores);
    }
  }
  absl::StatusOr<ReportRow> row =
      result.ok() ? RowFromFinals(s.name, options.num_servers, result->finals)
                  : absl::StatusOr<ReportRow>(result.status());
  if (!row.ok()) {
    std::fprintf(stderr, "[%d/%d] %s FAILED: %s\n", index, total, what.c_str(),
                 row.status().ToString().c_str());
    failure["error"] = row.status().ToString();
    out->failures.push_back(failure);
    return std::nullopt;
  }
  row->display_name = s.display_name;
  if (!row->variant.empty()) {
    absl::StrAppend(&row->display_name, " (", row->variant, ")");
  }
  row->modelled_as = s.modelled_as;
  AddServerFinals(result->server_finals, &*row);
  SetEvalCurve(evals, &*row);
  row->wire_bytes_per_model_byte = s.wire_bytes_per_model_byte;
  row->servers_beside_rank0 = s.servers_beside_rank0;
  row->updates = s.updates;
  // "-" where the run has no validation loss (emulated compute), as in the
  // tables.
  const std::string loss = row->eval_loss.has_value()
                               ? absl::StrFormat("%.4g", *row->eval_loss)
                               : std::string("-");
  std::fprintf(stderr, "[%d/%d] %s: %.1f samples/s, val loss %s, %.1f s%s\n",
               index, total, what.c_str(), row->throughput, loss.c_str(),
               result->wall_s, row->emulated ? " (emulated compute)" : "");
  for (const std::string& w : result->warnings) {
    std::fprintf(stderr, "compare: warning: %s\n", w.c_str());
  }
  for (const std::string& w : StarvedLoopWarnings(result->finals)) {
    out->starved_loops.push_back(absl::StrCat(what, ": ", w));
  }
  if (i == 0 && phase.training() && phase.seed <= 1 && plan.link) {
    CalibrationRequest request;
    request.enabled = plan.calibrate;
    request.cores = plan.cores;
    request.servers = plan.servers;
    request.earlier = plan.calibration;
    out->calibration = CalibrateAfterBaseline(request, *row);
  }
  out->runs.push_back({{"strategy", s.name},
                       {"workers", n},
                       {"servers", options.num_servers},
                       {"server_ports", result->server_ports},
                       {"wall_s", result->wall_s},
                       {"emulated", row->emulated},
                       {"warnings", result->warnings},
                       {"finals", result->finals}});
  SetPhase(phase, &out->runs.back());
  if (others) {
    out->runs.back()["other_cpu_cores"] = others->cores;
    out->runs.back()["steal_cores"] = others->steal_cores;
    out->runs.back()["busy_cores"] = others->busy_cores;
  }
  if (!options.timeline.empty()) {
    out->runs.back()["timeline"] = options.timeline;
  }
  out->runs.back()["network"] = result->network;
  if (plan.network.enabled()) out->networks.insert(result->network);
  // Oversubscribed: the workers' compute threads and the servers
  // outnumber the cores. Emulated compute sleeps and takes no core (the
  // report checks that it held its time, EmulatedComputeMisses).
  const int threads = row->emulated ? 0 : n * std::max(1, row->compute_threads);
  if (phase.training() && plan.cores > 0 &&
      threads + options.num_servers > plan.cores) {
    out->oversubscribed.push_back(absl::StrCat(
        s.name, " n=", n, " (",
        threads > 0 ? Count(threads, "compute thread") : std::string(),
        threads > 0 && options.num_servers > 0 ? " + " : "",
        options.num_servers > 0 ? Count(options.num_servers, "server") : "",
        ")"));
  }
  return *row;
}

}  // namespace

SweepOutcome RunSweep(const SweepPlan& plan) {
  SweepOutcome out;
  std::vector<double> durations;
  const int per_round = static_cast<int>(plan.runs.size());
  // The DDP row trains with the first seed only (its peer's data is the
  // first seed's export).
  auto trains_with = [&plan](int i, int seed) {
    return seed == 1 || plan.runs[i].strategy.name != kDdpStrategy;
  };
  int total = per_round * plan.repeats;
  for (int seed = 1; seed <= plan.seeds; ++seed) {
    for (int i = 0; i < per_round; ++i) total += trains_with(i, seed);
  }
  int index = 0;
  std::vector<std::optional<ReportRow>> trained(plan.runs.size());
  std::vector<std::vector<std::pair<uint64_t, ReportRow>>> seeded(
      plan.runs.size());
  // Seed by seed through all rows, so that the machine's slow spells fall
  // on every row alike.
  for (int seed = 1; seed <= plan.seeds; ++seed) {
    for (int i = 0; i < per_round; ++i) {
      if (!trains_with(i, seed)) continue;
      RunPhase phase;
      phase.seed = plan.seeds > 1 ? seed : 0;
      std::optional<ReportRow> row =
          RunOne(plan, i, phase, ++index, total, &durations, &out);
      if (seed == 1) trained[i] = row;
      if (row) seeded[i].emplace_back(seed, *std::move(row));
    }
  }
  for (int i = 0; i < per_round; ++i) {
    if (trained[i]) trained[i] = WithSeedRuns(*trained[i], seeded[i]);
  }
  std::vector<std::vector<ReportRow>> timed(plan.runs.size());
  // Each row's fastest step so far sizes its next window, so that a slow
  // training run (cold caches, evaluation) gives short windows once only.
  std::vector<double> fastest(plan.runs.size(), 0);
  for (int i = 0; i < per_round; ++i) {
    if (trained[i]) fastest[i] = trained[i]->step_s;
  }
  for (int round = 1; round <= plan.repeats; ++round) {
    for (int i = 0; i < per_round; ++i) {
      ++index;
      if (!trained[i]) continue;  // its failure is reported
      RunPhase phase;
      phase.timing = round;
      phase.window_steps = TimingWindowSteps(fastest[i], plan.min_window_s,
                                             plan.min_window_steps);
      std::optional<ReportRow> row =
          RunOne(plan, i, phase, index, total, &durations, &out);
      if (!row) continue;
      if (row->step_s > 0) {
        fastest[i] =
            fastest[i] > 0 ? std::min(fastest[i], row->step_s) : row->step_s;
        const double window = row->step_s * phase.window_steps;
        out.shortest_window_s = std::min(out.shortest_window_s, window);
        out.longest_window_s = std::max(out.longest_window_s, window);
      }
      timed[i].push_back(*std::move(row));
    }
  }
  for (int i = 0; i < per_round; ++i) {
    if (!trained[i]) continue;
    if (plan.repeats == 0) {
      out.rows.push_back(*trained[i]);
    } else if (!timed[i].empty()) {
      out.rows.push_back(WithTrainingRun(MedianRun(timed[i]), *trained[i]));
    }
  }
  // Only the exact strategies set the target (a lossy or stale row that
  // gets less far must not set an easier bar for every row) and are what
  // the loss gaps are taken against.
  const auto exact = [](const ReportRow& r) {
    return RowUpdatesLabel(r) == "exact";
  };
  out.target = ChooseTargetLoss(out.rows, plan.target_loss, exact);
  SetTimesToTarget(out.target, &out.rows);
  SetLossGaps(exact, &out.rows);
  return out;
}

}  // namespace ringside::compare
