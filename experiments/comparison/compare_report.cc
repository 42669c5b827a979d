#include "experiments/comparison/compare_report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiments/comparison/cost_model_link.h"
#include "experiments/comparison/ddp_availability.h"
#include "experiments/comparison/worker_args.h"
#include "experiments/report/loss_curves.h"
#include "experiments/report/plots.h"
#include "experiments/report/prediction_report.h"
#include "models/gradient_profiles.h"

namespace ringside::compare {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One line on what ran, for the report.
std::string RunLine(const WorkloadOptions& workload, int servers,
                    const std::vector<int>& workers,
                    const TrainingFlags& training,
                    const std::vector<std::string>& extra_worker_args) {
  std::string model = workload.model;
  if (model == "synthetic") {
    absl::StrAppend(&model, " (", workload.profile, " gradient profile, ");
    absl::StatusOr<GradientProfile> profile =
        FindGradientProfile(workload.profile);
    if (workload.emulated_compute_ms <= 0 && profile.ok() &&
        profile->compute.has_value()) {
      const ProfileCompute& c = *profile->compute;
      absl::StrAppend(&model, "emulated compute as the profile measured it: ",
                      absl::StrFormat("%.1f", c.forward_s * 1e3),
                      " ms forward + ",
                      absl::StrFormat("%.1f", c.backward_s * 1e3),
                      " ms backward per step on ", c.device, " at batch ",
                      c.batch_size, ", times the workers' --compute_scale)");
    } else {
      absl::StrAppend(&model, workload.emulated_compute_ms,
                      " ms emulated compute per step)");
    }
    if (workload.emulation_scale > 1) {
      absl::StrAppend(&model, " at emulation scale S = ",
                      workload.emulation_scale,
                      " (1/S of its bytes on links of 1/S the bandwidth)");
    }
  }
  std::string line = absl::StrCat(
      "model ", model, "; workers n = ", absl::StrJoin(workers, ", "),
      " (baseline: 1); K = ", servers,
      " servers for sharded strategies (sps: 1); ", workload.steps, " steps (",
      workload.warmup_steps, " warm-up, not measured), batch ",
      workload.batch_size, " per worker");
  if (const int every = workload.eval_every; every > 0) {
    absl::StrAppend(&line, "; validation loss every ", every, " steps");
  }
  if (const std::string described = training.Describe(); !described.empty()) {
    absl::StrAppend(&line, "; ", described);
  }
  if (!workload.preset.empty()) {
    absl::StrAppend(&line, "; preset ", workload.preset);
  }
  if (!extra_worker_args.empty()) {
    absl::StrAppend(&line, "; worker flags `",
                    absl::StrJoin(extra_worker_args, " "), "`");
  }
  return line;
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
  const int steps = plan.workload.steps;
  const int warmup = plan.workload.warmup_steps;
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
        steps, plan.repeats, plan.min_window_s, plan.min_window_steps, warmup,
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
      wide.push_back(absl::StrFormat("%s n=%d (%.0f%%)", ParallelTypeLabel(row),
                                     row.workers(), 100 * *spread));
    }
  }
  if (!wide.empty()) {
    notes.push_back(absl::StrCat(
        "Note: a wide run-to-run spread (slowest to fastest run over more "
        "than ",
        static_cast<int>(100 * kWideSpread),
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
  if (const double s = plan.workload.emulation_scale; s > 1) {
    notes.push_back(absl::StrCat(
        "Emulation scale S = ", s, ": every tensor held 1/", s,
        " of its elements and every link was shaped at 1/", s,
        " of the bandwidth it stands for (", plan.network.Describe(),
        "), the ring buckets, parameter-server chunks, zero3 units and "
        "fusion threshold 1/", s,
        " of theirs; compute time, latency and the tensor count were kept. "
        "So each transfer takes a full-size run's time and the compute/"
        "communication ratio is a full-size run's, while the cores move ",
        s,
        " times fewer bytes. What the scaling cannot keep: per-byte CPU "
        "costs (copies, summing, the optimizer, the emulated model's own "
        "arithmetic) shrink ",
        s,
        "-fold while per-message costs stay, so a strategy whose CPU per "
        "byte would bind at full size looks better here. Bytes and memory "
        "in the tables are the scaled run's (times ",
        s, " for full size)."));
  }
  if (const std::vector<std::string> misses = EmulatedComputeMisses(out.rows);
      !misses.empty()) {
    notes.push_back(absl::StrCat(
        "Note: emulated compute did not hold its time (measured compute per "
        "step more than ",
        static_cast<int>(100 * kEmulatedComputeTolerance),
        "% off what it emulated) in ", absl::StrJoin(misses, ", "),
        ": the synthetic model's own arithmetic, its optimizer and the "
        "cores' contention (or stragglers' --slow_ranks and "
        "--compute_jitter, by design) took longer than the emulated time, "
        "so these rows' utilization and step are not the emulated "
        "device's; a larger --emulation_scale shrinks that arithmetic."));
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
                                 absl::StrJoin(plan.not_on_device, "; "), "."));
  }
  if (!plan.not_run.empty()) {
    std::vector<std::string> runs;
    for (const NotRun& n : plan.not_run) {
      runs.push_back(absl::StrCat(n.run.strategy.display_name,
                                  " n=", n.run.workers, " (", n.reason, ")"));
    }
    notes.push_back(absl::StrCat(
        "Not run for want of GPUs: ", absl::StrJoin(runs, "; "), "."));
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
                                    const PlotSettings& settings,
                                    const std::string& hardware_line,
                                    std::vector<std::string>* notes) {
  if (!settings.enabled) return {};
  std::vector<ReportImage> images;
  absl::StatusOr<std::string> gnuplot = FindProgram(settings.gnuplot);
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

}  // namespace

SweepReport ReportSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const PlotSettings& plots, const std::string& command) {
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
  r.images = SweepPlots(plan, out, plots, r.hardware_line, &r.notes);

  std::string cost_model_md;
  if (plan.link.has_value()) {
    const CostInputs inputs =
        PredictionInputs(*plan.link, out.calibration.costs);
    const std::vector<PredictedRun> predicted =
        PredictRuns(out.rows, inputs, plan.cores);
    cost_model_md =
        absl::StrCat(PredictionMarkdown(predicted, inputs, plan.link->source),
                     "\n", CalibrationNote(out.calibration), "\n");
    r.cost_model = PredictionJson(predicted, inputs, plan.link->source);
    r.cost_model["calibration"] = out.calibration.costs
                                      ? CalibrationJson(*out.calibration.costs)
                                      : json();
    r.cost_model["no_calibration"] =
        out.calibration.costs ? json() : json(out.calibration.why_none);
  }
  r.doc.title =
      "ringside compare: " + plan.workload.model +
      (plan.workload.model == "synthetic" ? " " + plan.workload.profile : "") +
      ", n = " + absl::StrJoin(plan.sweep, ", ");
  r.doc.hardware = r.hardware_line;
  r.doc.run = RunLine(plan.workload, plan.servers, plan.sweep, plan.training,
                      ExtraWorkerArgs(plan.workload, plan.extra));
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

}  // namespace ringside::compare
