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
#include "experiments/comparison/sweep_plan.h"
#include "experiments/comparison/sweep_runner.h"
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
using compare::SweepPlan;
using compare::SweepOutcome;
using compare::PlanSweep;
using compare::RunSweep;
using compare::kBusyOtherCores;

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

compare::CompareOptions OptionsFromFlags(const char* argv0) {
  compare::CompareOptions o;
  o.workload = WorkloadFromFlags();
  o.sweep.workers = absl::GetFlag(FLAGS_workers);
  o.sweep.strategies = absl::GetFlag(FLAGS_strategies);
  o.sweep.servers = absl::GetFlag(FLAGS_servers);
  o.sweep.repeats = absl::GetFlag(FLAGS_repeats);
  o.sweep.min_window_s = absl::GetFlag(FLAGS_min_window_s);
  o.sweep.min_window_steps = absl::GetFlag(FLAGS_min_window_steps);
  o.sweep.target_loss = absl::GetFlag(FLAGS_target_loss);
  o.job.deadline = absl::GetFlag(FLAGS_deadline);
  o.job.security = SecurityFilesFromFlags();
  o.job.generate_auth_token = absl::GetFlag(FLAGS_generate_auth_token);
  o.job.relay_stderr = absl::GetFlag(FLAGS_verbose);
  o.job.timeline = absl::GetFlag(FLAGS_timeline);
  o.cost_model = CostModelFromFlags();
  o.ddp = DdpFromFlags();
  o.plots.enabled = absl::GetFlag(FLAGS_plots);
  o.plots.gnuplot = absl::GetFlag(FLAGS_gnuplot);
  o.links.gbit = absl::GetFlag(FLAGS_link_gbit);
  o.links.latency_us = absl::GetFlag(FLAGS_link_latency_us);
  o.links.tcp_congestion = absl::GetFlag(FLAGS_link_tcp_congestion);
  o.out_dir = absl::GetFlag(FLAGS_out_dir);
  o.results_md = absl::GetFlag(FLAGS_results_md);
  o.training_flags = [](int max_workers) {
    return TrainingFlagsFromFlags(max_workers);
  };
  o.worker_bin = WorkerBinary(argv0);
  o.ps_server_bin = PsServerBinary(argv0);
  return o;
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
  RS_ASSIGN_OR_RETURN(SweepPlan plan,
                      PlanSweep(argv0, extra, network, dir, OptionsFromFlags(argv0)));
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
