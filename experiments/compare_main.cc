// compare: runs the baseline (1 worker) and then every other strategy once
// per worker count of a sweep (--workers=1,2,4) on this machine, and writes
// the study-format utilization table (Parallel type, PrmSrv, W0..W(n-1),
// Total) per n plus throughput / speedup / scaling-efficiency tables across
// n: compare.md (also printed), compare.csv (one line per run),
// compare.json, and PNG plots drawn with gnuplot (utilization_n<N>.png,
// speedup.png; skipped with a note when gnuplot is missing). Every output
// says whether compute was real or emulated and on which hardware. Every
// row trains once for --steps steps, then is timed --repeats times (default
// 3) over windows of at least --min_window_s (2 s) and --min_window_steps
// (30), the rounds interleaved through all rows: the tables show the median
// timing run and the spread (experiments/report/repeats.h), and what other
// processes used of the CPU meanwhile. With
// --eval_every=E (default 5) the workers evaluate every E steps: each run's
// rank-0 validation loss curve goes to compare.json, loss_curves.csv and
// loss_{time,samples}_n<N>.png, and the tables gain each run's time to a
// target loss (--target_loss, else one every run reaches). With
// --timeline, one Chrome-trace timeline per run, timeline_<strategy>.json
// (timeline_<strategy>_n<N>.json when the sweep has several N). Flags after
// -- go to every worker.
//
//   compare --workers=1,2,4 --servers=4 --strategies=sps,dps --steps=40
//     -- --lr=0.05
//   compare --preset=comm_bound --steps=10     # experiments/presets/*.flags
//   compare --results_md=docs/RESULTS.md       # + images in docs/results/
//
// Before each run a progress line goes to stderr: "[3/9] ring n=2, ETA
// 00:42". A failing run is reported and skipped; the exit code is then 1.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/compare_plan.h"
#include "experiments/comparison/cost_model_link.h"
#include "experiments/comparison/ddp_availability.h"
#include "experiments/comparison/output_files.h"
#include "experiments/comparison/worker_args.h"
#include "common/machine_cpu.h"
#include "common/security_flags.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "experiments/cost/calibration.h"
#include "experiments/cost/cost_model.h"
#include "experiments/job/ddp_row.h"
#include "experiments/report/hardware.h"
#include "experiments/report/link_sweep.h"
#include "experiments/job/netns_topology.h"
#include "experiments/report/loss_curves.h"
#include "experiments/job/job_binaries.h"
#include "worker/stragglers.h"
#include "worker/training_flags.h"
#include "experiments/cost/link_estimate.h"
#include "experiments/job/local_job.h"
#include "experiments/report/plots.h"
#include "experiments/report/prediction_report.h"
#include "experiments/presets.h"
#include "experiments/report/progress.h"
#include "experiments/report/repeats.h"
#include "experiments/report/run_manifest.h"
#include "experiments/report/report.h"
#include "experiments/report/sweep_report.h"

ABSL_FLAG(std::vector<std::string>, workers,
          std::vector<std::string>({"1", "2", "4"}),
          "Worker counts N to sweep, comma-separated; every strategy but the "
          "baseline (always 1 worker) runs once per N.");
ABSL_FLAG(int, servers, 4, "Servers K for 'sharded' strategies (sps: 1).");
ABSL_FLAG(std::string, strategies, "",
          "Comma-separated strategies; default: all registered (baseline, "
          "sps, dps, ring, fusion first). The baseline always runs first. "
          "NAME@FLAG=VALUE[@...] runs NAME with its own worker flags (its "
          "options, or batch_size, accumulate_steps, lr_warmup_steps, "
          "lr_scaling), e.g. async_ps@staleness=0,async_ps@staleness=8 or "
          "ring@batch_size=8,ring@batch_size=16.");
ABSL_FLAG(int, steps, 40, "Training steps per worker.");
ABSL_FLAG(int, warmup_steps, 5, "Warm-up steps excluded from the measures.");
ABSL_FLAG(int, repeats, 3,
          "Timing runs of every row (each strategy at each n, and the DDP "
          "row) after its training run, round by round through all rows "
          "with the baseline in every round, without evaluation: each "
          "measures a window of at least --min_window_s and "
          "--min_window_steps steps (after --warmup_steps) sized from the "
          "row's fastest step so far. Each row is its median timing run by "
          "step time, whole, with the training run's loss curve; the tables "
          "give the slowest and fastest run and the spread. 0: the training "
          "run alone (--steps steps) sets the row, a quick look, not a "
          "measurement.");
ABSL_FLAG(double, min_window_s, 2.0,
          "The shortest measured window of a timing run (s), see --repeats.");
ABSL_FLAG(int, min_window_steps, 30,
          "The fewest measured steps of a timing run, see --repeats.");
ABSL_FLAG(int, eval_every, 5,
          "Passed to every worker: evaluate the validation loss every N steps "
          "and after the last, for the loss curves (loss against time and "
          "samples) and each run's time to the target loss; 0: no curves.");
ABSL_FLAG(double, target_loss, 0,
          "The validation loss whose time to reach the tables show (Time to "
          "target); 0: the largest of the runs' lowest losses, which every "
          "run reaches.");
ABSL_FLAG(int, batch_size, 32, "Local batch size per worker.");
ABSL_FLAG(std::string, model, "mlp",
          "Model name passed to the workers: mlp or synthetic.");
ABSL_FLAG(std::string, device, "cpu",
          "Workers' compute device (--device): cpu or cuda (NCCL strategies "
          "need one GPU per worker).");
ABSL_FLAG(std::string, profile, "resnet50",
          "--model=synthetic: gradient profile (resnet50, vgg16, bert-base, "
          "gpt2, mobilenet_v2) passed to the workers.");
ABSL_FLAG(double, emulated_compute_ms, 0,
          "--model=synthetic: emulated compute per step (ms) passed to the "
          "workers; the outputs say 'emulated'.");
ABSL_FLAG(std::string, worker_args, "",
          "Extra worker flags, separated by spaces (for presets), e.g. "
          "\"--mlp_widths=64,2048,10 --optimizer=adam\"; flags after -- come "
          "later and win.");
ABSL_FLAG(std::string, preset, "",
          "Run a preset: experiments/presets/<name>.flags (study4, "
          "comm_bound, compute_bound, ...); flags given here override it.");
ABSL_FLAG(std::string, preset_dir, "",
          "Folder of the presets; default: the runfiles', then the source "
          "tree's experiments/presets.");
ABSL_FLAG(bool, verbose, false,
          "Relay every process's log lines (stderr); failures always show "
          "the failing process's last lines.");
ABSL_FLAG(std::string, out_dir, "out",
          "Directory for compare.{md,csv,json}, the plots (created).");
ABSL_FLAG(bool, plots, true, "Draw the PNG plots with gnuplot.");
ABSL_FLAG(std::string, gnuplot, "gnuplot", "gnuplot program (name or path).");
ABSL_FLAG(std::string, results_md, "",
          "Also write the report to this Markdown file (e.g. "
          "docs/RESULTS.md), its plots copied to results/ beside it.");
ABSL_FLAG(bool, timeline, false,
          "Also write <out_dir>/timeline_<strategy>[_n<N>].json per run: a "
          "Chrome-trace timeline of every worker (ui.perfetto.dev).");
ABSL_FLAG(absl::Duration, deadline, absl::Minutes(10),
          "Wall-time limit of each run.");
ABSL_FLAG(std::vector<std::string>, link_gbit, std::vector<std::string>({"0"}),
          "Network shaping: run every server and worker in its own network "
          "namespace behind a link of this many Gbit/s per direction (needs "
          "root and iproute2; otherwise runs on loopback and says so). "
          "0: no shaping, loopback. A list (0.1,1,10) sweeps the links: "
          "the whole sweep runs once per link (in <out_dir>/link_*/), then "
          "crossover.{md,csv,json} and throughput_vs_bandwidth_n<N>.png "
          "compare them.");
ABSL_FLAG(std::vector<std::string>, link_latency_us,
          std::vector<std::string>({"0"}),
          "Network shaping: one-way latency between processes in "
          "microseconds (netem; needs --link_gbit > 0). A list sweeps it "
          "with every shaped --link_gbit.");
ABSL_FLAG(std::string, link_tcp_congestion,
          ringside::NetworkShape().tcp_congestion,
          ringside::kLinkTcpCongestionHelp);
ABSL_FLAG(bool, cost_model, true,
          "Set the cost model's predicted step time and utilization beside "
          "every measured run, with the error (## Cost model vs measured).");
ABSL_FLAG(bool, calibrate, true,
          "Cost model: right after the baseline run, measure the CPU costs "
          "the α-β terms lack (per byte and per call of the workers' "
          "all-reduce, reduce-scatter and all-gather, and of the parameter "
          "server's push+pull; experiments/cost/calibration.h) on this "
          "machine for the run's model size, and use them in every "
          "prediction of the run.");
ABSL_FLAG(double, model_bandwidth_gbit, 0,
          "Cost model: link bandwidth B in Gbit/s; 0: --link_gbit when "
          "shaping, else measured on loopback before the runs.");
ABSL_FLAG(double, model_latency_us, -1,
          "Cost model: per-message latency α in µs; < 0: --link_latency_us "
          "when shaping, else measured on loopback before the runs.");
ABSL_FLAG(double, model_overlap, 0,
          "Cost model: share of compute that communication overlaps, o in "
          "[0, 1].");
ABSL_FLAG(double, failure_timeout_s, 30,
          "Passed to every worker and server: a peer silent for longer than "
          "this fails the run, naming the lost rank or server (s; 0: off).");
ABSL_FLAG(bool, ddp, true,
          "Add the PyTorch DDP row (experiments/ddp_peer.py, gloo on CPU, "
          "NCCL on CUDA; --model=mlp) at every n when `import torch` works "
          "in --torch_python; otherwise the report says why it is absent.");
ABSL_FLAG(std::string, torch_python, "python3",
          "Python with PyTorch for the DDP row, e.g. ~/torchenv/bin/python "
          "(README: making the virtual environment).");
ABSL_FLAG(std::string, ddp_peer, "",
          "The DDP peer script; default: experiments/ddp_peer.py from the "
          "runfiles.");
ABSL_FLAG(bool, generate_auth_token, true,
          "Without --auth_token_file, give the job a fresh random token "
          "(a private temporary file, deleted afterwards) so that only its "
          "own processes can call its servers; --nogenerate_auth_token runs "
          "without a token.");

namespace ringside {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using compare::CalibrateAfterBaseline;
using compare::CalibrationNote;
using compare::CalibrationRequest;
using compare::CopyImagesBeside;
using compare::CostModelLink;
using compare::ExtraWorkerArgs;
using compare::FindDdp;
using compare::DdpNote;
using compare::MakeCostModelLink;
using compare::MakeDir;
using compare::Plan;
using compare::PredictionInputs;
using compare::SweepCalibration;
using compare::UserPath;
using compare::WorkerArgs;
using compare::WorkerCounts;
using compare::WorkerFlag;
using compare::WriteFile;

// What every worker trains, from the flags.
compare::WorkloadOptions WorkloadFromFlags() {
  compare::WorkloadOptions w;
  w.model = absl::GetFlag(FLAGS_model);
  w.profile = absl::GetFlag(FLAGS_profile);
  w.emulated_compute_ms = absl::GetFlag(FLAGS_emulated_compute_ms);
  w.device = absl::GetFlag(FLAGS_device);
  w.batch_size = absl::GetFlag(FLAGS_batch_size);
  w.steps = absl::GetFlag(FLAGS_steps);
  w.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  w.eval_every = absl::GetFlag(FLAGS_eval_every);
  w.failure_timeout_s = absl::GetFlag(FLAGS_failure_timeout_s);
  w.worker_args = absl::GetFlag(FLAGS_worker_args);
  w.preset = absl::GetFlag(FLAGS_preset);
  return w;
}

compare::CostModelOptions CostModelFromFlags() {
  compare::CostModelOptions c;
  c.enabled = absl::GetFlag(FLAGS_cost_model);
  c.calibrate = absl::GetFlag(FLAGS_calibrate);
  c.bandwidth_gbit = absl::GetFlag(FLAGS_model_bandwidth_gbit);
  c.latency_us = absl::GetFlag(FLAGS_model_latency_us);
  c.overlap = absl::GetFlag(FLAGS_model_overlap);
  return c;
}

compare::DdpOptions DdpFromFlags() {
  compare::DdpOptions d;
  d.enabled = absl::GetFlag(FLAGS_ddp);
  d.torch_python = absl::GetFlag(FLAGS_torch_python);
  d.peer_script = absl::GetFlag(FLAGS_ddp_peer);
  return d;
}

// "1 worker", "4 workers".
std::string Count(int n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// One line on what ran, for the report.
std::string RunLine(const std::vector<int>& workers,
                    const TrainingFlags& training,
                    const std::vector<std::string>& extra_worker_args) {
  std::string model = absl::GetFlag(FLAGS_model);
  if (model == "synthetic") {
    absl::StrAppend(&model, " (", absl::GetFlag(FLAGS_profile),
                    " gradient profile, ",
                    absl::GetFlag(FLAGS_emulated_compute_ms),
                    " ms emulated compute per step)");
  }
  std::string line = absl::StrCat(
      "model ", model, "; workers n = ", absl::StrJoin(workers, ", "),
      " (baseline: 1); K = ", absl::GetFlag(FLAGS_servers),
      " servers for sharded strategies (sps: 1); ", absl::GetFlag(FLAGS_steps),
      " steps (", absl::GetFlag(FLAGS_warmup_steps),
      " warm-up, not measured), batch ", absl::GetFlag(FLAGS_batch_size),
      " per worker");
  if (const int every = absl::GetFlag(FLAGS_eval_every); every > 0) {
    absl::StrAppend(&line, "; validation loss every ", every, " steps");
  }
  if (const std::string described = training.Describe(); !described.empty()) {
    absl::StrAppend(&line, "; ", described);
  }
  if (!absl::GetFlag(FLAGS_preset).empty()) {
    absl::StrAppend(&line, "; preset ", absl::GetFlag(FLAGS_preset));
  }
  if (!extra_worker_args.empty()) {
    absl::StrAppend(&line, "; worker flags `",
                    absl::StrJoin(extra_worker_args, " "), "`");
  }
  return line;
}

struct Run {
  ListedStrategy strategy;
  int workers = 1;
};

// Which run of a row (repeats.h): its training run, the --steps steps every
// row shares, with evaluation; or timing run `timing` (1-based) of
// --repeats, measuring `window_steps` steps after the warm-up, without.
struct RunPhase {
  int timing = 0;  // 0: the training run
  int64_t window_steps = 0;

  bool training() const { return timing == 0; }
};

// Another process's CPU during a run beyond this share of a core names the
// run in the report's notes.
constexpr double kBusyOtherCores = 0.25;

// --eval_every and --target_loss, or INVALID_ARGUMENT naming the one at
// fault.
absl::Status CheckLossCurveFlags() {
  if (const int every = absl::GetFlag(FLAGS_eval_every); every < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--eval_every must be >= 0 (0: no loss curves), got ", every));
  }
  // Written so that NaN fails too.
  if (const double target = absl::GetFlag(FLAGS_target_loss);
      !(target >= 0 && std::isfinite(target))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--target_loss must be a finite loss >= 0 (0: chosen from the runs), "
        "got ",
        target));
  }
  return absl::OkStatus();
}

// What one compare invocation will run: the flags checked, the binaries
// found, the strategies and worker counts in order, the cost model's link
// (measured before the runs load the machine).
struct SweepPlan {
  std::vector<int> sweep;  // worker counts n
  NetworkShape network;
  std::string worker_bin, ps_server_bin;  // ps_server_bin empty: none needed
  std::vector<ListedStrategy> registered;  // worker --list_strategies
  std::vector<ListedStrategy> strategies;  // chosen, baseline first
  // Registered strategies left out because the workers' device cannot run
  // them (--device=cuda), with the listing's reason.
  std::vector<std::string> not_on_device;
  std::vector<Run> runs;                   // in running order, per round
  int repeats = 3;             // timing rounds (--repeats); 0: training only
  double min_window_s = 2.0;   // --min_window_s
  int min_window_steps = 30;   // --min_window_steps
  fs::path dir;                            // --out_dir
  std::vector<std::string> extra;          // the flags after --
  std::vector<std::string> worker_args;    // every flag the workers get
  std::vector<std::string> server_args;
  TrainingFlags training;  // checked once, before any process starts
  absl::StatusOr<DdpPeer> ddp = absl::UnknownError("not looked for");
  std::optional<CostModelLink> link;  // --cost_model
  int servers = -1;                   // --servers
  int cores = 0;
  double load_start = 0;
  // A calibration an earlier link of this invocation measured (on
  // loopback, for the same model, so the same for every link): reused.
  std::optional<Calibration> calibration;
};

// What the runs gave: a report row per run that finished, the JSON of each
// run and of each failure, and what the notes need to say about them.
struct SweepOutcome {
  std::vector<ReportRow> rows;       // with their times to `target`
  std::optional<TargetLoss> target;  // none without loss curves
  json runs = json::array();
  json failures = json::array();
  // Row name -> the worker flags not passed to it (it does not read them).
  std::map<std::string, std::string> ignored_flags;
  std::vector<std::string> oversubscribed;
  std::set<std::string> networks;  // what the runs ran on, when shaping
  // The DDP rows' exported data (worker --export_batches), by directory
  // (per n and step count): written once, reused by the later rounds.
  std::set<std::string> ddp_data;
  // Runs during which other processes kept more than kBusyOtherCores busy:
  // the run, and the cores they used on average.
  std::vector<std::pair<std::string, double>> busy_runs;
  // Runs whose Gloo event loop starved (StarvedLoopWarnings), with why.
  std::vector<std::string> starved_loops;
  double most_other_cores = 0;  // over every run
  double most_steal_cores = 0;
  // The timing runs' measured windows (step × window steps), seconds.
  double shortest_window_s = std::numeric_limits<double>::infinity();
  double longest_window_s = 0;
  // The cost model's calibration (after the baseline), or why there is
  // none.
  SweepCalibration calibration;
};

// The report: printed once, written to compare.{md,csv,json} and, with
// --results_md, there too.
struct SweepReport {
  SweepDocument doc;
  std::string markdown;
  std::string hardware_line;
  Hardware hardware;
  RunManifest manifest;
  double load_end = 0;
  std::vector<std::string> notes;
  std::vector<ReportImage> images;
  json cost_model;
};

// Planning: checks the flags, finds the binaries and the DDP peer, orders
// the runs (the baseline once with one worker, then every strategy and the
// DDP row at each n) and measures the cost model's link.
absl::StatusOr<SweepPlan> PlanSweep(const char* argv0,
                                    const std::vector<std::string>& extra,
                                    const NetworkShape& network,
                                    const fs::path& dir) {
  SweepPlan p;
  RS_ASSIGN_OR_RETURN(p.sweep, WorkerCounts(absl::GetFlag(FLAGS_workers)));
  // Straggler ranks must exist at the largest n.
  RS_ASSIGN_OR_RETURN(p.training,
                      TrainingFlagsFromFlags(
                          *std::max_element(p.sweep.begin(), p.sweep.end())));
  RS_RETURN_IF_ERROR(CheckLossCurveFlags());
  p.repeats = absl::GetFlag(FLAGS_repeats);
  if (p.repeats < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repeats must be >= 0 (got ", p.repeats, ")"));
  }
  p.min_window_s = absl::GetFlag(FLAGS_min_window_s);
  p.min_window_steps = absl::GetFlag(FLAGS_min_window_steps);
  if (!(p.min_window_s >= 0) || p.min_window_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--min_window_s must be >= 0 (got ", p.min_window_s,
        ") and --min_window_steps >= 1 (got ", p.min_window_steps, ")"));
  }
  p.network = network;
  RS_RETURN_IF_ERROR(p.network.Validate());
  RS_ASSIGN_OR_RETURN(p.worker_bin, WorkerBinary(argv0));
  RS_ASSIGN_OR_RETURN(p.registered, ListStrategies(p.worker_bin));
  RS_ASSIGN_OR_RETURN(p.strategies,
                      Plan(p.registered, absl::GetFlag(FLAGS_strategies)));
  if (absl::GetFlag(FLAGS_device) == "cuda") {
    std::vector<ListedStrategy> runnable;
    for (const ListedStrategy& s : p.strategies) {
      if (s.cuda_runs) {
        runnable.push_back(s);
      } else if (!absl::GetFlag(FLAGS_strategies).empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            s.name, " does not run on CUDA workers: ", s.cuda));
      } else {
        p.not_on_device.push_back(absl::StrCat(s.name, " (", s.cuda, ")"));
      }
    }
    p.strategies = std::move(runnable);
  }
  for (const ListedStrategy& s : p.strategies) {
    if (s.servers == ServerKind::kNone || !p.ps_server_bin.empty()) continue;
    RS_ASSIGN_OR_RETURN(p.ps_server_bin, PsServerBinary(argv0));
  }
  p.dir = dir;
  RS_RETURN_IF_ERROR(MakeDir(p.dir));
  p.extra = extra;
  p.worker_args = WorkerArgs(WorkloadFromFlags(), p.training, extra);
  p.ddp = FindDdp(argv0, DdpFromFlags(), absl::GetFlag(FLAGS_model));
  if (!p.ddp.ok()) {
    std::fprintf(stderr, "compare: no PyTorch DDP row: %s\n",
                 std::string(p.ddp.status().message()).c_str());
  }
  if (absl::GetFlag(FLAGS_cost_model)) {
    absl::StatusOr<CostModelLink> made =
        MakeCostModelLink(p.network, p.worker_args, CostModelFromFlags());
    if (!made.ok()) return Annotate(made.status(), "cost model");
    p.link = *made;
  }
  p.runs = {{p.strategies[0], 1}};
  for (int n : p.sweep) {
    for (size_t i = 1; i < p.strategies.size(); ++i) {
      p.runs.push_back({p.strategies[i], n});
    }
    if (p.ddp.ok()) p.runs.push_back({DdpListing(), n});
  }
  p.servers = absl::GetFlag(FLAGS_servers);
  p.cores = ProbeHardware({}).cores;
  p.load_start = LoadAverage();
  p.server_args = {absl::StrCat("--failure_timeout_s=",
                                absl::GetFlag(FLAGS_failure_timeout_s))};
  return p;
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
    const std::string kept =
        SlowRanksWithin(it->substr(kSlow.size()), n);
    if (kept.empty()) {
      options.worker_args.erase(it);
    } else {
      *it = absl::StrCat(kSlow, kept);
    }
    break;
  }
  // A timing run: its window after the warm-up, no evaluation (last, so
  // they win over every flag before).
  if (!phase.training()) {
    int64_t warmup = absl::GetFlag(FLAGS_warmup_steps);
    if (std::optional<std::string> given =
            WorkerFlag(options.worker_args, "warmup_steps");
        given && !absl::SimpleAtoi(*given, &warmup)) {
      warmup = absl::GetFlag(FLAGS_warmup_steps);
    }
    options.worker_args.push_back(
        absl::StrCat("--steps=", warmup + phase.window_steps));
    options.worker_args.push_back("--eval_every=0");
  }
  options.server_args = plan.server_args;
  options.deadline = absl::GetFlag(FLAGS_deadline);
  options.security = SecurityFilesFromFlags();
  options.generate_auth_token = absl::GetFlag(FLAGS_generate_auth_token);
  options.relay_stderr = absl::GetFlag(FLAGS_verbose);
  options.network = plan.network;
  if (absl::GetFlag(FLAGS_timeline)) {
    std::string stem = s.name;
    for (const std::string& flag : s.run_flags) {  // --staleness=2: _staleness2
      absl::StrAppend(&stem, "_", absl::StrReplaceAll(flag.substr(2),
                                                      {{"=", ""}, {"/", ""}}));
    }
    if (!(s.name == "baseline" || plan.sweep.size() == 1)) {
      absl::StrAppend(&stem, "_n", n);
    }
    if (!phase.training()) absl::StrAppend(&stem, "_t", phase.timing);
    const std::string name = absl::StrCat("timeline_", stem, ".json");
    options.timeline = fs::absolute(plan.dir / name).string();
  }
  return options;
}

// The JSON fields that say which run of its row a run was.
void SetPhase(const RunPhase& phase, json* run) {
  (*run)["phase"] = phase.training() ? "training" : "timing";
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
    if (out->ddp_data.count(data) == 0) {
      if (absl::Status e = ExportJobData(plan.worker_bin, n,
                                         options.worker_args, data,
                                         absl::Minutes(5));
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
  } else {
    absl::StrAppend(&what, ", timing run ", phase.timing, " of ",
                    plan.repeats, " (", phase.window_steps, " steps)");
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
    std::fprintf(stderr, "[%d/%d] %s FAILED: %s\n", index, total,
                 what.c_str(), row.status().ToString().c_str());
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
  if (i == 0 && phase.training() && plan.link) {
    CalibrationRequest request;
    request.enabled = absl::GetFlag(FLAGS_calibrate);
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
  // outnumber the cores.
  const int threads = n * std::max(1, row->compute_threads);
  if (phase.training() && plan.cores > 0 &&
      threads + options.num_servers > plan.cores) {
    out->oversubscribed.push_back(absl::StrCat(
        s.name, " n=", n, " (", Count(threads, "compute thread"),
        options.num_servers > 0 ? " + " : "",
        options.num_servers > 0 ? Count(options.num_servers, "server") : "",
        ")"));
  }
  return *row;
}

// Running (repeats.h): every row's training run, then --repeats timing
// rounds through the rows whose training run finished, the baseline in
// every round; each row is then its median timing run with its training
// run's loss curve (with --repeats=0, its training run).
SweepOutcome RunSweep(const SweepPlan& plan) {
  SweepOutcome out;
  std::vector<double> durations;
  const int per_round = static_cast<int>(plan.runs.size());
  const int total = per_round * (1 + plan.repeats);
  int index = 0;
  std::vector<std::optional<ReportRow>> trained(plan.runs.size());
  for (int i = 0; i < per_round; ++i) {
    trained[i] = RunOne(plan, i, RunPhase{}, ++index, total, &durations, &out);
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
        fastest[i] = fastest[i] > 0 ? std::min(fastest[i], row->step_s)
                                    : row->step_s;
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
  out.target = ChooseTargetLoss(out.rows, absl::GetFlag(FLAGS_target_loss));
  SetTimesToTarget(out.target, &out.rows);
  return out;
}

// The notes under the tables: a busy or oversubscribed machine, the
// network, emulated compute, the DDP row, flags not passed, failures.
std::vector<std::string> SweepNotes(const SweepPlan& plan,
                                    const SweepOutcome& out, double load_end) {
  std::vector<std::string> notes;
  // Only the load before the first run says whether others were busy: by
  // the end the 1-minute average mostly counts our own runs.
  if (plan.cores > 0 && plan.load_start > plan.cores) {
    notes.push_back(absl::StrFormat(
        "Note: the machine was busy before the runs (load average %.1f at "
        "the start, %.1f at the end, on %d cores): other processes shared "
        "the cores, so the numbers are slower and noisier than on an idle "
        "machine.",
        plan.load_start, load_end, plan.cores));
  }
  const int steps = absl::GetFlag(FLAGS_steps);
  const int warmup = absl::GetFlag(FLAGS_warmup_steps);
  if (plan.repeats > 0) {
    notes.push_back(absl::StrFormat(
        "Measurement: every row trained once for %d steps (its loss curve, "
        "validation loss and time to target come from that run), then ran "
        "%d timing runs without evaluation (--repeats), each measuring "
        "%g s and at least %d steps after %d warm-up steps at the row's "
        "fastest step so far, round by round through all rows with the "
        "baseline in every round (measured windows %s). Each row is its "
        "median timing run by step time, whole (utilization, throughput, "
        "compute, memory); the tables give the slowest and fastest timing "
        "run's throughput and the spread between them, the cost model's "
        "table their step times.",
        steps, plan.repeats, plan.min_window_s, plan.min_window_steps,
        warmup,
        out.longest_window_s > 0
            ? absl::StrFormat("%.1f–%.1f s", out.shortest_window_s,
                              out.longest_window_s)
            : std::string("not measured")));
  } else {
    notes.push_back(absl::StrFormat(
        "Measurement: one run per row of %d steps (%d warm-up, not "
        "measured), --repeats=0: a quick look. Windows this short are not "
        "stable, and no spread is shown; the default (--repeats=3) times "
        "every row three more times over windows of at least 2 s.",
        steps, warmup));
  }
  notes.push_back(absl::StrFormat(
      "Other processes: at most %.2f cores busy on average during any run "
      "(the machine's busy time less compare's and its runs'), the "
      "hypervisor's steal at most %.2f cores.",
      out.most_other_cores, out.most_steal_cores));
  if (!out.starved_loops.empty()) {
    notes.push_back(absl::StrCat(
        "Note: a starved event loop (Gloo's loop waited for a core more "
        "than half the run; its collectives were slowed by it) in ",
        absl::StrJoin(out.starved_loops, "; "), "."));
  }
  if (!out.busy_runs.empty()) {
    std::vector<std::string> named;
    for (const auto& [what, cores] : out.busy_runs) {
      named.push_back(absl::StrFormat("%s (%.2f cores)", what, cores));
    }
    notes.push_back(absl::StrCat(
        "Note: a busy machine: other processes kept more than ",
        absl::StrFormat("%.2f", kBusyOtherCores),
        " of a core busy on average during ", named.size(), " run",
        named.size() == 1 ? "" : "s", ": ", absl::StrJoin(named, ", "),
        ". Those runs shared the cores with them; their rows are slower "
        "and noisier than on a quiet machine."));
  }
  std::vector<std::string> wide;
  for (const ReportRow& row : out.rows) {
    const std::optional<double> spread = ThroughputSpread(row);
    if (spread && *spread > kWideSpread) {
      wide.push_back(absl::StrFormat("%s n=%d (%.0f%%)",
                                     ParallelTypeLabel(row), row.workers(),
                                     100 * *spread));
    }
  }
  if (!wide.empty()) {
    notes.push_back(absl::StrCat(
        "Note: a wide run-to-run spread (slowest to fastest run over more "
        "than ", static_cast<int>(100 * kWideSpread),
        "% of the median's throughput, \"(wide)\" in the tables) in ",
        absl::StrJoin(wide, ", "),
        ": the machine's noise is as large as these rows' differences."));
  }
  if (!out.oversubscribed.empty()) {
    notes.push_back(absl::StrCat(
        "Note: more processes than the ", plan.cores, " cores in ",
        absl::StrJoin(out.oversubscribed, ", "),
        ": utilization then measures the OS scheduler as much as the "
        "strategy."));
  }
  for (const std::string& net : out.networks) {
    notes.push_back("Network: " + net);
  }
  if (std::any_of(out.rows.begin(), out.rows.end(),
                  [](const ReportRow& r) { return r.emulated; })) {
    notes.push_back(
        "Val loss: none for runs with emulated compute (\"-\" in the "
        "tables, null in JSON, empty in CSV): the synthetic model only "
        "stands in for a network's gradient sizes and compute time, so it "
        "has no validation loss to report.");
  }
  notes.push_back(DdpNote(plan.ddp));
  if (!plan.not_on_device.empty()) {
    notes.push_back(absl::StrCat("Not run on CUDA workers: ",
                                 absl::StrJoin(plan.not_on_device, "; "),
                                 "."));
  }
  for (const auto& [row_name, flags] : out.ignored_flags) {
    notes.push_back(absl::StrCat("Not passed to ", row_name, ": `", flags,
                                 "` (a flag only other strategies read; its "
                                 "worker would refuse it)."));
  }
  for (const json& f : out.failures) {
    notes.push_back(absl::StrCat("Failed: ", f["strategy"].get<std::string>(),
                                 " n=", f["workers"].get<int>(), ": ",
                                 f["error"].get<std::string>()));
  }
  return notes;
}

// The plots (gnuplot), or why there are none: that reason is added to
// `notes` and printed.
std::vector<ReportImage> SweepPlots(const SweepPlan& plan,
                                    const SweepOutcome& out,
                                    const std::string& hardware_line,
                                    std::vector<std::string>* notes) {
  if (!absl::GetFlag(FLAGS_plots)) return {};
  std::vector<ReportImage> images;
  absl::StatusOr<std::string> gnuplot =
      FindProgram(absl::GetFlag(FLAGS_gnuplot));
  std::string why;
  if (!gnuplot.ok()) {
    why = absl::StrCat("Plots skipped: ", gnuplot.status().message(),
                       " (Debian: apt-get install gnuplot-nox); the tables "
                       "are complete.");
  } else {
    PlotOptions plot_options;
    plot_options.dir = fs::absolute(plan.dir).string();
    plot_options.subtitle =
        absl::StrCat(ComputeLabel(out.rows), " compute; ", hardware_line);
    if (out.target) plot_options.target_loss = out.target->loss;
    absl::StatusOr<std::vector<ReportImage>> drawn =
        DrawPlots(*gnuplot, out.rows, plan.sweep, plot_options);
    if (drawn.ok()) {
      images = *drawn;
    } else {
      why = absl::StrCat("Plots failed: ", drawn.status().message());
    }
  }
  if (!why.empty()) {
    std::fprintf(stderr, "compare: %s\n", why.c_str());
    notes->push_back(why);
  }
  return images;
}

// Reporting: the hardware the runs had, the notes, the plots, the cost
// model's predictions beside the measured runs, and the Markdown report
// (printed to stdout).
SweepReport ReportSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const std::string& command) {
  SweepReport r;
  // Where it ran, from what the workers said.
  std::vector<std::string> devices;
  for (const ReportRow& row : out.rows) {
    if (std::find(devices.begin(), devices.end(), row.device) ==
        devices.end()) {
      devices.push_back(row.device);
    }
  }
  r.hardware = ProbeHardware(devices);
  r.load_end = LoadAverage();
  r.hardware_line = HardwareLine(r.hardware);
  r.notes = SweepNotes(plan, out, r.load_end);
  r.images = SweepPlots(plan, out, r.hardware_line, &r.notes);

  std::string cost_model_md;
  if (plan.link.has_value()) {
    const CostInputs inputs = PredictionInputs(*plan.link, out.calibration.costs);
    const std::vector<PredictedRun> predicted = PredictRuns(out.rows, inputs, plan.cores);
    cost_model_md = absl::StrCat(
        PredictionMarkdown(predicted, inputs, plan.link->source), "\n",
        CalibrationNote(out.calibration), "\n");
    r.cost_model = PredictionJson(predicted, inputs, plan.link->source);
    r.cost_model["calibration"] = out.calibration.costs
                                      ? CalibrationJson(*out.calibration.costs)
                                      : json();
    r.cost_model["no_calibration"] =
        out.calibration.costs ? json() : json(out.calibration.why_none);
  }
  r.doc.title = "ringside compare: " + absl::GetFlag(FLAGS_model) +
                (absl::GetFlag(FLAGS_model) == "synthetic"
                     ? " " + absl::GetFlag(FLAGS_profile)
                     : "") +
                ", n = " + absl::StrJoin(plan.sweep, ", ");
  r.doc.hardware = r.hardware_line;
  r.doc.run = RunLine(plan.sweep, plan.training, ExtraWorkerArgs(WorkloadFromFlags(), plan.extra));
  r.doc.command = command;
  r.manifest = ProbeRunManifest({command});
  r.doc.manifest = RunManifestLine(r.manifest);
  if (out.target) r.doc.target_loss = TargetLossLine(*out.target);
  r.doc.images = r.images;
  r.doc.cost_model = cost_model_md;
  r.doc.notes = r.notes;
  r.markdown = SweepMarkdown(out.rows, plan.sweep, r.doc);
  std::printf("%s", r.markdown.c_str());
  std::fflush(stdout);
  return r;
}

// compare.json: the configuration, the hardware, the tables (with the loss
// curves), the target loss, the cost model, every run's final records, the
// failures and the notes.
json SweepJsonDocument(const SweepPlan& plan, const SweepOutcome& out,
                       const SweepReport& r, const std::string& command) {
  json config = {{"workers", plan.sweep},
                 {"servers", plan.servers},
                 {"strategies", SweepStrategies(out.rows)},
                 {"steps", absl::GetFlag(FLAGS_steps)},
                 {"warmup_steps", absl::GetFlag(FLAGS_warmup_steps)},
                 {"repeats", plan.repeats},
                 {"min_window_s", plan.min_window_s},
                 {"min_window_steps", plan.min_window_steps},
                 {"eval_every", absl::GetFlag(FLAGS_eval_every)},
                 {"target_loss", absl::GetFlag(FLAGS_target_loss)},
                 {"batch_size", absl::GetFlag(FLAGS_batch_size)},
                 {"model", absl::GetFlag(FLAGS_model)},
                 {"preset", absl::GetFlag(FLAGS_preset)},
                 {"worker_args", plan.worker_args},
                 {"command", command},
                 {"cores", plan.cores}};
  config["accumulate_steps"] = plan.training.accumulate_steps;
  config["lr_scaling"] = LrScalingName(plan.training.lr_scaling);
  config["lr_reference_batch"] = plan.training.lr_reference_batch;
  config["lr_warmup_steps"] = plan.training.lr_warmup_steps;
  if (absl::GetFlag(FLAGS_model) == "synthetic") {
    config["profile"] = absl::GetFlag(FLAGS_profile);
    config["emulated_compute_ms"] = absl::GetFlag(FLAGS_emulated_compute_ms);
  }
  json plot_files = json::array();
  for (const ReportImage& image : r.images) plot_files.push_back(image.path);
  return {{"config", config},
          {"hardware", HardwareJson(r.hardware)},
          {"manifest", RunManifestJson(r.manifest)},
          {"load_average", {{"start", plan.load_start}, {"end", r.load_end}}},
          {"compute", ComputeLabel(out.rows)},
          {"report", SweepJson(out.rows, plan.sweep)},
          {"target_loss", TargetLossJson(out.target)},
          {"cost_model", r.cost_model},
          {"plots", plot_files},
          {"runs", out.runs},
          {"failures", out.failures},
          {"notes", r.notes}};
}

// Writing: compare.{md,csv,json} (and loss_curves.csv when a run has a
// curve) in --out_dir and, with --results_md, the report there with its
// plots copied to results/ beside it.
absl::Status WriteSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const SweepReport& r, const std::string& command,
                        const std::string& results) {
  const json all = SweepJsonDocument(plan, out, r, command);
  RS_RETURN_IF_ERROR(WriteFile(plan.dir / "compare.md", r.markdown));
  RS_RETURN_IF_ERROR(WriteFile(plan.dir / "compare.csv",
                               SweepCsv(out.rows, r.hardware_line)));
  RS_RETURN_IF_ERROR(
      WriteFile(plan.dir / "compare.json", all.dump(2) + "\n"));
  const bool curves = AnyCurve(out.rows);
  if (curves) {
    RS_RETURN_IF_ERROR(
        WriteFile(plan.dir / "loss_curves.csv", LossCurvesCsv(out.rows)));
  }
  std::fprintf(stderr, "compare: wrote %s/compare.{md,csv,json}%s%s%s\n",
               plan.dir.string().c_str(), curves ? ", loss_curves.csv" : "",
               r.images.empty() ? "" : ", the plots",
               absl::GetFlag(FLAGS_timeline) ? " and timeline_*.json" : "");

  if (results.empty()) return absl::OkStatus();
  const fs::path md = UserPath(results);
  SweepDocument results_doc = r.doc;
  RS_ASSIGN_OR_RETURN(results_doc.images,
                      CopyImagesBeside(md, plan.dir, r.images));
  RS_RETURN_IF_ERROR(
      WriteFile(md, SweepMarkdown(out.rows, plan.sweep, results_doc)));
  std::fprintf(stderr, "compare: wrote %s (images in %s/results)\n",
               md.string().c_str(), md.parent_path().string().c_str());
  return absl::OkStatus();
}

// One link's sweep: plans, runs, reports (printed) and writes into `dir`
// (`results`: also that Markdown file), calibrating the cost model unless
// an earlier link `measured` it; the outcome and the plan.
struct LinkRun {
  SweepPlan plan;
  SweepOutcome outcome;
};
absl::StatusOr<LinkRun> RunOneLink(const char* argv0,
                                   const std::vector<std::string>& extra,
                                   const std::string& command,
                                   const NetworkShape& network,
                                   const fs::path& dir,
                                   const std::string& results,
                                   const std::optional<Calibration>& measured) {
  RS_ASSIGN_OR_RETURN(SweepPlan plan, PlanSweep(argv0, extra, network, dir));
  plan.calibration = measured;
  SweepOutcome outcome = RunSweep(plan);
  const SweepReport report = ReportSweep(plan, outcome, command);
  RS_RETURN_IF_ERROR(WriteSweep(plan, outcome, report, command, results));
  return LinkRun{std::move(plan), std::move(outcome)};
}

// --link_gbit x --link_latency_us, each checked: the links to run on,
// unshaped first, then by bandwidth and latency. A latency goes only with
// a shaped link (unless it is the only link asked for, which Validate then
// refuses as before).
absl::StatusOr<std::vector<NetworkShape>> LinkShapes() {
  auto numbers = [](const char* flag, const std::vector<std::string>& list)
      -> absl::StatusOr<std::vector<double>> {
    std::set<double> values;
    for (const std::string& s : list) {
      double v = 0;
      if (!absl::SimpleAtod(s, &v)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", flag, " wants numbers such as 0.1,1,10; got '", s, "'"));
      }
      values.insert(v);
    }
    if (values.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " lists no value"));
    }
    return std::vector<double>(values.begin(), values.end());
  };
  RS_ASSIGN_OR_RETURN(const std::vector<double> gbits,
                      numbers("link_gbit", absl::GetFlag(FLAGS_link_gbit)));
  RS_ASSIGN_OR_RETURN(
      const std::vector<double> latencies,
      numbers("link_latency_us", absl::GetFlag(FLAGS_link_latency_us)));
  std::vector<NetworkShape> shapes;
  for (double gbit : gbits) {
    if (gbit == 0 && gbits.size() > 1) {  // unshaped, once, no latency
      shapes.emplace_back();
      continue;
    }
    for (double latency : latencies) {
      NetworkShape shape;
      shape.link_gbit = gbit;
      shape.link_latency_us = latency;
      shape.tcp_congestion = absl::GetFlag(FLAGS_link_tcp_congestion);
      RS_RETURN_IF_ERROR(shape.Validate());
      shapes.push_back(shape);
    }
  }
  return shapes;
}

LinkPoint PointOf(const NetworkShape& shape) {
  return LinkPoint{shape.link_gbit, shape.link_latency_us};
}

// Why shaped links cannot be made here ("" when they can): one trial
// namespace pair, deleted again.
std::string ShapingUnavailable(const NetworkShape& shape) {
  const std::unique_ptr<JobNetwork> network =
      JobNetwork::Start(shape, "127.0.0.1", 0, 1);
  return network->shaped() ? "" : network->fallback_reason();
}

// A link sweep (more than one link): the whole sweep once per link in
// <out_dir>/link_*/, then the crossover table (printed and written as
// crossover.{md,csv,json}) and the throughput-against-bandwidth plots.
// Where namespaces cannot be made it says so once, runs unshaped loopback
// only and predicts the shaped links from that run. The exit code as
// RunAll's.
int RunLinkSweep(const char* argv0, const std::vector<std::string>& extra,
                 const std::string& command,
                 const std::vector<NetworkShape>& shapes) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "compare: %s\n", s.ToString().c_str());
    return 1;
  };
  const fs::path top = UserPath(absl::GetFlag(FLAGS_out_dir));
  if (absl::Status s = MakeDir(top); !s.ok()) return fail(s);
  std::vector<std::string> notes;
  std::vector<NetworkShape> to_run = shapes;
  for (const NetworkShape& shape : shapes) {
    if (!shape.enabled()) continue;
    if (const std::string why = ShapingUnavailable(shape); !why.empty()) {
      const std::string note = absl::StrCat(
          "Network shaping unavailable here (", why,
          "): only unshaped loopback ran; the shaped links have the cost "
          "model's predictions from that run, and no measurements.");
      std::fprintf(stderr, "compare: %s\n", note.c_str());
      notes.push_back(note);
      to_run = {NetworkShape{}};
    }
    break;
  }
  std::vector<LinkSweepPoint> points;
  std::vector<int> sweep;
  std::vector<std::string> worker_args;
  std::optional<Calibration> calibration;  // the first link's
  int cores = 0;                           // the machine's, from the plan
  bool failed = false;
  for (size_t i = 0; i < to_run.size(); ++i) {
    const LinkPoint link = PointOf(to_run[i]);
    std::fprintf(stderr, "compare: link %zu of %zu: %s\n", i + 1,
                 to_run.size(), LinkLabel(link).c_str());
    absl::StatusOr<LinkRun> run =
        RunOneLink(argv0, extra, command, to_run[i], top / LinkDirName(link),
                   /*results=*/"", calibration);
    if (!run.ok()) return fail(run.status());
    failed = failed || !run->outcome.failures.empty();
    sweep = run->plan.sweep;
    worker_args = run->plan.worker_args;
    cores = run->plan.cores;
    LinkSweepPoint point;
    point.link = link;
    point.dir = LinkDirName(link);
    point.rows = run->outcome.rows;
    if (run->plan.link) {
      point.predicted = PredictRuns(
          point.rows,
          PredictionInputs(*run->plan.link, run->outcome.calibration.costs),
          run->plan.cores);
    }
    if (!calibration) calibration = run->outcome.calibration.costs;
    for (const std::string& net : run->outcome.networks) {
      if (net.find("not emulated") != std::string::npos ||
          net.find("unavailable") != std::string::npos) {
        notes.push_back(absl::StrCat(LinkLabel(link), " ran on: ", net));
      }
    }
    points.push_back(std::move(point));
  }
  if (to_run.size() < shapes.size() && absl::GetFlag(FLAGS_cost_model)) {
    const std::vector<ReportRow> basis = points.front().rows;
    for (const NetworkShape& shape : shapes) {
      if (!shape.enabled()) continue;
      absl::StatusOr<CostModelLink> link = MakeCostModelLink(shape, worker_args, CostModelFromFlags());
      if (!link.ok()) return fail(link.status());
      LinkSweepPoint point;
      point.link = PointOf(shape);
      point.measured = false;
      point.predicted =
          PredictRuns(basis, PredictionInputs(*link, calibration), cores);
      points.push_back(std::move(point));
    }
  }
  // Samples per worker step from the rows (batch × passes; per-entry
  // batches differ, so not --batch_size).
  const double batch = 0;
  const Crossover table = CrossoverTable(points, sweep, batch);
  std::vector<ReportImage> images;
  if (absl::GetFlag(FLAGS_plots)) {
    absl::StatusOr<std::string> gnuplot =
        FindProgram(absl::GetFlag(FLAGS_gnuplot));
    PlotOptions options;
    options.dir = fs::absolute(top).string();
    options.subtitle = HardwareLine(ProbeHardware({}));
    absl::StatusOr<std::vector<ReportImage>> drawn =
        gnuplot.ok() ? DrawBandwidthPlots(*gnuplot, points, sweep, options, batch)
                     : absl::StatusOr<std::vector<ReportImage>>(gnuplot.status());
    if (drawn.ok()) {
      images = *drawn;
    } else {
      notes.push_back(absl::StrCat("Bandwidth plots skipped: ",
                                   drawn.status().message()));
    }
  }
  auto document = [&](const std::vector<ReportImage>& shown) {
    std::string md = absl::StrCat(
        "# ringside compare: link sweep, n = ", absl::StrJoin(sweep, ", "),
        "\n\nCommand: `", command, "`\n\nEach link's full report: ");
    std::vector<std::string> links;
    for (const LinkSweepPoint& p : points) {
      if (p.measured) links.push_back(absl::StrCat("`", p.dir, "/compare.md`"));
    }
    absl::StrAppend(&md, absl::StrJoin(links, ", "), ".\n\n",
                    CrossoverMarkdown(table));
    for (const ReportImage& image : shown) {
      absl::StrAppend(&md, "\n![", image.caption, "](", image.path, ")\n");
    }
    if (!notes.empty()) {
      absl::StrAppend(&md, "\n## Notes\n\n");
      for (const std::string& note : notes) absl::StrAppend(&md, "- ", note, "\n");
    }
    return md;
  };
  const std::string md = document(images);
  std::printf("%s", md.c_str());
  std::fflush(stdout);
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"crossover.md", md},
        {"crossover.csv", CrossoverCsv(table)},
        {"crossover.json", CrossoverJson(table).dump(2) + "\n"}}) {
    if (absl::Status s = WriteFile(top / name, text); !s.ok()) return fail(s);
  }
  std::fprintf(stderr, "compare: wrote %s/crossover.{md,csv,json}%s\n",
               top.string().c_str(), images.empty() ? "" : " and the plots");
  if (const std::string results = absl::GetFlag(FLAGS_results_md);
      !results.empty()) {
    const fs::path path = UserPath(results);
    absl::StatusOr<std::vector<ReportImage>> copied =
        CopyImagesBeside(path, top, images);
    if (!copied.ok()) return fail(copied.status());
    if (absl::Status s = WriteFile(path, document(*copied)); !s.ok()) {
      return fail(s);
    }
  }
  return failed ? 1 : 0;
}

// Plans, runs, reports and writes; returns the process exit code: 0 when
// every run finished, 1 when one failed or nothing could be run or written.
int RunAll(const char* argv0, const std::vector<std::string>& extra,
           const std::string& command) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "compare: %s\n", s.ToString().c_str());
    return 1;
  };
  absl::StatusOr<std::vector<NetworkShape>> shapes = LinkShapes();
  if (!shapes.ok()) return fail(shapes.status());
  if (shapes->size() > 1) return RunLinkSweep(argv0, extra, command, *shapes);
  absl::StatusOr<LinkRun> run =
      RunOneLink(argv0, extra, command, shapes->front(),
                 UserPath(absl::GetFlag(FLAGS_out_dir)),
                 absl::GetFlag(FLAGS_results_md), /*measured=*/std::nullopt);
  if (!run.ok()) return fail(run.status());
  return run->outcome.failures.empty() ? 0 : 1;
}

// How the user ran us, for the report: under `bazel run` as the bazel
// command, otherwise as the program's name.
std::string CommandLine(const std::vector<std::string>& args,
                        const std::vector<std::string>& extra) {
  std::vector<std::string> parts;
  if (std::getenv("BUILD_WORKSPACE_DIRECTORY") != nullptr) {
    parts = {"bazel run //experiments:compare --"};
  } else {
    parts = {fs::path(args[0]).filename().string()};
  }
  parts.insert(parts.end(), args.begin() + 1, args.end());
  if (!extra.empty()) {
    parts.push_back("--");
    parts.insert(parts.end(), extra.begin(), extra.end());
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs every strategy locally over a worker-count sweep and writes the "
      "comparison tables and plots; flags after -- go to every worker.");
  const std::vector<std::string> extra =
      ringside::SplitPassThroughArgs(&argc, argv);
  const std::vector<std::string> args(argv, argv + argc);
  // --preset=NAME becomes --flagfile=<its file> before the other flags, so
  // those given explicitly override the preset's.
  const absl::StatusOr<std::vector<std::string>> expanded =
      ringside::ExpandPreset(
          args,
          ringside::PresetDirs(
              argv[0], ringside::FlagValue(args, "preset_dir").value_or("")));
  if (!expanded.ok()) {
    std::fprintf(stderr, "compare: %s\n",
                 std::string(expanded.status().message()).c_str());
    return 2;
  }
  std::vector<std::string> storage = *expanded;
  std::vector<char*> parse_argv;
  for (std::string& a : storage) parse_argv.push_back(a.data());
  if (const absl::Status parsed = ringside::ParseOwnFlags(
          static_cast<int>(parse_argv.size()), parse_argv.data());
      !parsed.ok()) {
    std::fprintf(stderr, "compare: %s\n",
                 std::string(parsed.message()).c_str());
    return 2;
  }
  return ringside::RunAll(argv[0], extra, ringside::CommandLine(args, extra));
}
