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
// This file defines the flags and passes their values to the modules in
// experiments/comparison/, which do the work.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/security_flags.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/link_sweep_runner.h"
#include "experiments/comparison/output_files.h"
#include "experiments/job/job_binaries.h"
#include "experiments/job/local_job.h"
#include "experiments/job/netns_topology.h"
#include "experiments/presets.h"
#include "models/gradient_profiles.h"
#include "models/profile_file.h"
#include "worker/training_flags.h"

ABSL_FLAG(std::vector<std::string>, workers,
          std::vector<std::string>({"1", "2", "4"}),
          "Worker counts N to sweep, comma-separated; every strategy but the "
          "baseline (always 1 worker) runs once per N.");
ABSL_FLAG(int, servers, 4, "Servers K for 'sharded' strategies (sps: 1).");
ABSL_FLAG(std::string, strategies, "",
          "Comma-separated strategies; default: every registered one in the "
          "default sweep (baseline, sps, dps, ring, fusion first; not "
          "ring_bf16, ring_topk, ring_sign, ring_onebit_adam, local_sgd, "
          "diloco, whose point "
          "needs a slow link: --preset=slow_link); all: every registered "
          "one. The baseline always runs first. "
          "NAME@FLAG=VALUE[@...] runs NAME with its own worker flags (its "
          "options, or batch_size, accumulate_steps, optimizer, lr, "
          "momentum, lr_warmup_steps, lr_scaling, emulated_compute_ms), "
          "e.g. async_ps@staleness=0,async_ps@staleness=8, "
          "ring@batch_size=8,ring@batch_size=16 or "
          "ring_topk@optimizer=sgd@lr=0.1.");
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
ABSL_FLAG(int, seeds, 1,
          "Training runs of every row, with seeds 1..N (each run's workers "
          "get --seed and --data_seed at that seed: other initial "
          "parameters and data order). The row's validation loss and time "
          "to target are then the medians over the seeds, and the report's "
          "seeds table gives each row's range and its final-loss gap to "
          "the exact strategies seed by seed. The PyTorch DDP row trains "
          "with the first seed only. 1: one training run, the workers' own "
          "seeds.");
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
ABSL_FLAG(bool, gpu_per_worker, false,
          "--device=cuda: every worker a GPU of its own, as in a node of n "
          "GPUs (the study's), so a row of n workers needs n GPUs. NCCL "
          "rows (ring, fusion, zero1-3, PyTorch DDP) need that anyway; "
          "without this flag the parameter-server rows share a GPU when "
          "there are fewer. A row that needs more GPUs than the workers "
          "see is not run, and the report says so.");
ABSL_FLAG(std::string, profile, "resnet50",
          "--model=synthetic: gradient profile (resnet50, vgg16, bert-base, "
          "gpt2, mobilenet_v2, gpt2_study: the GPT-2 study's 106 M model; "
          "or a profile file's path: "
          "models/profile_file.h) passed to the workers.");
ABSL_FLAG(double, emulated_compute_ms, 0,
          "--model=synthetic: emulated compute per step (ms) passed to the "
          "workers; the outputs say 'emulated'.");
ABSL_FLAG(double, emulation_scale, 1,
          "--model=synthetic on shaped links: emulate at scale S >= 1, every "
          "tensor with 1/S of its elements, every link shaped at 1/S of "
          "--link_gbit, the buckets, chunks, zero3 units and fusion "
          "threshold 1/S of theirs, compute time and latency kept: a "
          "full-size run's transfer times and compute/communication "
          "ratio while the cores move S times fewer bytes (per-byte CPU "
          "costs shrink with them; the report says so). 1: full size.");
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
          "server's push+pull; experiments/calibration/calibration.h) on this "
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
ABSL_FLAG(std::string, torch_model, "",
          "With --model=synthetic --profile=FILE: the PyTorch model the "
          "profile was exported from (module:factory or file.py:factory, "
          "as tools/export_profile.py takes it); the DDP row trains it with "
          "real compute on random inputs (--torch_input) beside the "
          "profile's emulated rows.");
ABSL_FLAG(std::string, torch_input, "",
          "With --torch_model: one example's input shape, e.g. 3,224,224.");
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

namespace fs = std::filesystem;

// The flags' values, for the modules in experiments/comparison/.
compare::CompareOptions OptionsFromFlags(const char* argv0) {
  compare::CompareOptions o;
  compare::WorkloadOptions& w = o.workload;
  w.model = absl::GetFlag(FLAGS_model);
  // A profile file, as the workers (who may run elsewhere) will read it.
  w.profile = IsProfilePath(absl::GetFlag(FLAGS_profile))
                  ? compare::UserPath(absl::GetFlag(FLAGS_profile)).string()
                  : absl::GetFlag(FLAGS_profile);
  w.emulated_compute_ms = absl::GetFlag(FLAGS_emulated_compute_ms);
  w.emulation_scale = absl::GetFlag(FLAGS_emulation_scale);
  w.device = absl::GetFlag(FLAGS_device);
  w.gpu_per_worker = absl::GetFlag(FLAGS_gpu_per_worker);
  w.batch_size = absl::GetFlag(FLAGS_batch_size);
  w.steps = absl::GetFlag(FLAGS_steps);
  w.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  w.eval_every = absl::GetFlag(FLAGS_eval_every);
  w.failure_timeout_s = absl::GetFlag(FLAGS_failure_timeout_s);
  w.worker_args = absl::GetFlag(FLAGS_worker_args);
  w.preset = absl::GetFlag(FLAGS_preset);
  o.sweep.workers = absl::GetFlag(FLAGS_workers);
  o.sweep.strategies = absl::GetFlag(FLAGS_strategies);
  o.sweep.servers = absl::GetFlag(FLAGS_servers);
  o.sweep.repeats = absl::GetFlag(FLAGS_repeats);
  o.sweep.seeds = absl::GetFlag(FLAGS_seeds);
  o.sweep.min_window_s = absl::GetFlag(FLAGS_min_window_s);
  o.sweep.min_window_steps = absl::GetFlag(FLAGS_min_window_steps);
  o.sweep.target_loss = absl::GetFlag(FLAGS_target_loss);
  o.job.deadline = absl::GetFlag(FLAGS_deadline);
  o.job.security = SecurityFilesFromFlags();
  o.job.generate_auth_token = absl::GetFlag(FLAGS_generate_auth_token);
  o.job.relay_stderr = absl::GetFlag(FLAGS_verbose);
  o.job.timeline = absl::GetFlag(FLAGS_timeline);
  o.cost_model.enabled = absl::GetFlag(FLAGS_cost_model);
  o.cost_model.calibrate = absl::GetFlag(FLAGS_calibrate);
  o.cost_model.bandwidth_gbit = absl::GetFlag(FLAGS_model_bandwidth_gbit);
  o.cost_model.latency_us = absl::GetFlag(FLAGS_model_latency_us);
  o.cost_model.overlap = absl::GetFlag(FLAGS_model_overlap);
  o.ddp.enabled = absl::GetFlag(FLAGS_ddp);
  o.ddp.torch_python = absl::GetFlag(FLAGS_torch_python);
  o.ddp.peer_script = absl::GetFlag(FLAGS_ddp_peer);
  o.ddp.torch_model = absl::GetFlag(FLAGS_torch_model);
  o.ddp.torch_input = absl::GetFlag(FLAGS_torch_input);
  o.plots.enabled = absl::GetFlag(FLAGS_plots);
  o.plots.gnuplot = absl::GetFlag(FLAGS_gnuplot);
  o.links.gbit = absl::GetFlag(FLAGS_link_gbit);
  o.links.latency_us = absl::GetFlag(FLAGS_link_latency_us);
  o.links.tcp_congestion = absl::GetFlag(FLAGS_link_tcp_congestion);
  o.links.emulation_scale = w.emulation_scale;
  o.out_dir = absl::GetFlag(FLAGS_out_dir);
  o.results_md = absl::GetFlag(FLAGS_results_md);
  o.training_flags = [](int max_workers) {
    return TrainingFlagsFromFlags(max_workers);
  };
  o.worker_bin = WorkerBinary(argv0);
  o.ps_server_bin = PsServerBinary(argv0);
  return o;
}

// Plans, runs, reports and writes; returns the process exit code: 0 when
// every run finished, 1 when one failed or nothing could be run or written.
int RunAll(const char* argv0, const std::vector<std::string>& extra,
           const std::string& command) {
  const compare::CompareOptions options = OptionsFromFlags(argv0);
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "compare: %s\n", s.ToString().c_str());
    return 1;
  };
  if (const double s = options.workload.emulation_scale;
      s != 1 && options.workload.model != "synthetic") {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        "--emulation_scale=", s, " needs --model=synthetic (a real model's "
        "tensors cannot shrink; got --model=", options.workload.model, ")")));
  }
  if (options.workload.model == "synthetic") {  // a bad profile fails now
    if (absl::Status s = FindGradientProfile(options.workload.profile).status();
        !s.ok()) {
      return fail(s);
    }
  }
  absl::StatusOr<std::vector<NetworkShape>> shapes =
      compare::LinkShapes(options.links);
  if (!shapes.ok()) return fail(shapes.status());
  if (shapes->size() > 1) {
    return compare::RunLinkSweep(argv0, extra, command, *shapes, options);
  }
  absl::StatusOr<compare::LinkRun> run = compare::RunOneLink(
      argv0, extra, command, shapes->front(),
      compare::UserPath(options.out_dir), options.results_md,
      /*measured=*/std::nullopt, options);
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
