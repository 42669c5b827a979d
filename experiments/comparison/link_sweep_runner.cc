#include "experiments/comparison/link_sweep_runner.h"

#include <cstdio>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/emulation_scale_check.h"
#include "common/status_macros.h"
#include "experiments/comparison/compare_report.h"
#include "experiments/comparison/cost_model_link.h"
#include "experiments/comparison/output_files.h"
#include "experiments/comparison/sweep_outputs.h"
#include "experiments/report/hardware.h"
#include "experiments/report/link_sweep.h"
#include "experiments/report/plots.h"
#include "experiments/report/prediction_report.h"

namespace ringside::compare {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

absl::StatusOr<LinkRun> RunOneLink(
    const char* argv0, const std::vector<std::string>& extra,
    const std::string& command, const NetworkShape& network,
    const std::filesystem::path& dir, const std::string& results,
    const std::optional<Calibration>& measured, const CompareOptions& options) {
  RS_ASSIGN_OR_RETURN(SweepPlan plan,
                      PlanSweep(argv0, extra, network, dir, options));
  plan.calibration = measured;
  SweepOutcome outcome = RunSweep(plan);
  const SweepReport report = ReportSweep(plan, outcome, options.plots, command);
  RS_RETURN_IF_ERROR(WriteSweep(plan, outcome, report, command, results));
  return LinkRun{std::move(plan), std::move(outcome)};
}

absl::StatusOr<std::vector<NetworkShape>> LinkShapes(const LinkOptions& links) {
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
  // Before the division below, which a bad scale would make meaningless.
  RS_RETURN_IF_ERROR(CheckEmulationScale(links.emulation_scale));
  RS_ASSIGN_OR_RETURN(const std::vector<double> gbits,
                      numbers("link_gbit", links.gbit));
  RS_ASSIGN_OR_RETURN(const std::vector<double> latencies,
                      numbers("link_latency_us", links.latency_us));
  std::vector<NetworkShape> shapes;
  for (double gbit : gbits) {
    if (gbit == 0 && gbits.size() > 1) {  // unshaped, once, no latency
      shapes.emplace_back();
      shapes.back().emulation_scale = links.emulation_scale;  // refused
      RS_RETURN_IF_ERROR(shapes.back().Validate());
      continue;
    }
    for (double latency : latencies) {
      NetworkShape shape;
      // Shaped at 1/S of the link the run stands for.
      shape.link_gbit = gbit / links.emulation_scale;
      shape.emulation_scale = links.emulation_scale;
      shape.link_latency_us = latency;
      shape.tcp_congestion = links.tcp_congestion;
      RS_RETURN_IF_ERROR(shape.Validate());
      shapes.push_back(shape);
    }
  }
  return shapes;
}

int RunLinkSweep(const char* argv0, const std::vector<std::string>& extra,
                 const std::string& command,
                 const std::vector<NetworkShape>& shapes,
                 const CompareOptions& options) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "compare: %s\n", s.ToString().c_str());
    return 1;
  };
  const fs::path top = UserPath(options.out_dir);
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
    std::fprintf(stderr, "compare: link %zu of %zu: %s\n", i + 1, to_run.size(),
                 LinkLabel(link).c_str());
    absl::StatusOr<LinkRun> run =
        RunOneLink(argv0, extra, command, to_run[i], top / LinkDirName(link),
                   /*results=*/"", calibration, options);
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
  if (to_run.size() < shapes.size() && options.cost_model.enabled) {
    const std::vector<ReportRow> basis = points.front().rows;
    for (const NetworkShape& shape : shapes) {
      if (!shape.enabled()) continue;
      absl::StatusOr<CostModelLink> link =
          MakeCostModelLink(shape, worker_args, options.cost_model);
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
  if (options.plots.enabled) {
    absl::StatusOr<std::string> gnuplot = FindProgram(options.plots.gnuplot);
    PlotOptions plot_options;
    plot_options.dir = fs::absolute(top).string();
    plot_options.subtitle = HardwareLine(ProbeHardware({}));
    absl::StatusOr<std::vector<ReportImage>> drawn =
        gnuplot.ok()
            ? DrawBandwidthPlots(*gnuplot, points, sweep, plot_options, batch)
            : absl::StatusOr<std::vector<ReportImage>>(gnuplot.status());
    if (drawn.ok()) {
      images = *drawn;
    } else {
      notes.push_back(
          absl::StrCat("Bandwidth plots skipped: ", drawn.status().message()));
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
      for (const std::string& note : notes)
        absl::StrAppend(&md, "- ", note, "\n");
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
  if (const std::string& results = options.results_md; !results.empty()) {
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

}  // namespace ringside::compare
