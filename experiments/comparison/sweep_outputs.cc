#include "experiments/comparison/sweep_outputs.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/status_macros.h"
#include "core/lr_scaling.h"
#include "experiments/comparison/output_files.h"
#include "experiments/report/loss_curves.h"
#include "experiments/report/report.h"

namespace ringside::compare {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// compare.json: the configuration, the hardware, the tables (with the loss
// curves), the target loss, the cost model, every run's final records, the
// failures, the runs left out for want of GPUs and the notes.
json SweepJsonDocument(const SweepPlan& plan, const SweepOutcome& out,
                       const SweepReport& r, const std::string& command) {
  json config = {{"workers", plan.sweep},
                 {"servers", plan.servers},
                 {"strategies", SweepStrategies(out.rows)},
                 {"steps", plan.workload.steps},
                 {"warmup_steps", plan.workload.warmup_steps},
                 {"repeats", plan.repeats},
                 {"seeds", plan.seeds},
                 {"min_window_s", plan.min_window_s},
                 {"min_window_steps", plan.min_window_steps},
                 {"eval_every", plan.workload.eval_every},
                 {"target_loss", plan.target_loss},
                 {"batch_size", plan.workload.batch_size},
                 {"model", plan.workload.model},
                 {"device", plan.workload.device},
                 {"preset", plan.workload.preset},
                 {"worker_args", plan.worker_args},
                 {"command", command},
                 {"cores", plan.cores}};
  config["accumulate_steps"] = plan.training.accumulate_steps;
  config["lr_scaling"] = LrScalingName(plan.training.lr_scaling);
  config["lr_reference_batch"] = plan.training.lr_reference_batch;
  config["lr_warmup_steps"] = plan.training.lr_warmup_steps;
  if (plan.workload.model == "synthetic") {
    config["profile"] = plan.workload.profile;
    config["emulated_compute_ms"] = plan.workload.emulated_compute_ms;
    config["emulation_scale"] = plan.workload.emulation_scale;
  }
  if (plan.workload.device == "cuda") {
    config["gpus"] = plan.gpus;
    config["gpu_per_worker"] = plan.workload.gpu_per_worker;
  }
  json not_run = json::array();
  for (const NotRun& n : plan.not_run) {
    not_run.push_back({{"strategy", n.run.strategy.name},
                       {"parallel_type", n.run.strategy.display_name},
                       {"workers", n.run.workers},
                       {"gpus_needed", n.gpus_needed},
                       {"reason", n.reason}});
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
          {"not_run", not_run},
          {"notes", r.notes}};
}

}  // namespace

absl::Status WriteSweep(const SweepPlan& plan, const SweepOutcome& out,
                        const SweepReport& r, const std::string& command,
                        const std::string& results_md) {
  const json all = SweepJsonDocument(plan, out, r, command);
  RS_RETURN_IF_ERROR(WriteFile(plan.dir / "compare.md", r.markdown));
  RS_RETURN_IF_ERROR(
      WriteFile(plan.dir / "compare.csv", SweepCsv(out.rows, r.hardware_line)));
  RS_RETURN_IF_ERROR(WriteFile(plan.dir / "compare.json", all.dump(2) + "\n"));
  const bool curves = AnyCurve(out.rows);
  if (curves) {
    RS_RETURN_IF_ERROR(
        WriteFile(plan.dir / "loss_curves.csv", LossCurvesCsv(out.rows)));
  }
  std::fprintf(stderr, "compare: wrote %s/compare.{md,csv,json}%s%s%s\n",
               plan.dir.string().c_str(), curves ? ", loss_curves.csv" : "",
               r.images.empty() ? "" : ", the plots",
               plan.job.timeline ? " and timeline_*.json" : "");

  if (results_md.empty()) return absl::OkStatus();
  const fs::path md = UserPath(results_md);
  SweepDocument results_doc = r.doc;
  RS_ASSIGN_OR_RETURN(results_doc.images,
                      CopyImagesBeside(md, plan.dir, r.images));
  RS_RETURN_IF_ERROR(
      WriteFile(md, SweepMarkdown(out.rows, plan.sweep, results_doc)));
  std::fprintf(stderr, "compare: wrote %s (images in %s/results)\n",
               md.string().c_str(), md.parent_path().string().c_str());
  return absl::OkStatus();
}

}  // namespace ringside::compare
