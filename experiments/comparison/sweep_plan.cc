#include "experiments/comparison/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "experiments/comparison/compare_plan.h"
#include "experiments/comparison/ddp_availability.h"
#include "experiments/comparison/output_files.h"
#include "experiments/comparison/worker_args.h"
#include "experiments/report/hardware.h"

namespace ringside::compare {
namespace {

// --eval_every and --target_loss, or INVALID_ARGUMENT naming the one at
// fault.
absl::Status CheckLossCurveOptions(int eval_every, double target_loss) {
  if (eval_every < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--eval_every must be >= 0 (0: no loss curves), got ", eval_every));
  }
  // Written so that NaN fails too.
  if (!(target_loss >= 0 && std::isfinite(target_loss))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--target_loss must be a finite loss >= 0 (0: chosen from the runs), "
        "got ",
        target_loss));
  }
  return absl::OkStatus();
}

// --device=cuda: the GPUs the workers see (worker --count_gpus);
// FAILED_PRECONDITION when they see none.
absl::StatusOr<int> GpusTheWorkersSee(const std::string& worker_bin) {
  RS_ASSIGN_OR_RETURN(const WorkerGpus gpus, CountWorkerGpus(worker_bin));
  if (gpus.count < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("--device=cuda, but the workers see no GPU (", worker_bin,
                     " --count_gpus: ", gpus.why, ")"));
  }
  return gpus.count;
}

// Moves the runs that need more GPUs than p->gpus (GpusNeeded) from
// p->runs to p->not_run, each with its reason.
void LeaveOutRunsBeyondTheGpus(bool gpu_per_worker, SweepPlan* p) {
  std::vector<Run> fit;
  for (Run& run : p->runs) {
    const int needed = GpusNeeded(run.strategy, run.workers, gpu_per_worker);
    if (needed <= p->gpus) {
      fit.push_back(std::move(run));
      continue;
    }
    const char* why = run.strategy.gpu_per_rank
                          ? "one per worker: NCCL needs a distinct GPU per rank"
                          : "one per worker: --gpu_per_worker";
    p->not_run.push_back(
        {run, needed,
         absl::StrCat("needs ", needed, " GPUs (", why,
                      "); this machine's workers see ", p->gpus)});
  }
  p->runs = std::move(fit);
}

}  // namespace

absl::StatusOr<SweepPlan> PlanSweep(const char* argv0,
                                    const std::vector<std::string>& extra,
                                    const NetworkShape& network,
                                    const std::filesystem::path& dir,
                                    const CompareOptions& options) {
  SweepPlan p;
  RS_ASSIGN_OR_RETURN(p.sweep, WorkerCounts(options.sweep.workers));
  // Straggler ranks must exist at the largest n.
  RS_ASSIGN_OR_RETURN(p.training, options.training_flags(*std::max_element(
                                      p.sweep.begin(), p.sweep.end())));
  RS_RETURN_IF_ERROR(CheckLossCurveOptions(options.workload.eval_every,
                                           options.sweep.target_loss));
  p.repeats = options.sweep.repeats;
  if (p.repeats < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repeats must be >= 0 (got ", p.repeats, ")"));
  }
  p.seeds = options.sweep.seeds;
  if (p.seeds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--seeds must be >= 1 (got ", p.seeds, ")"));
  }
  p.min_window_s = options.sweep.min_window_s;
  p.min_window_steps = options.sweep.min_window_steps;
  if (!(p.min_window_s >= 0) || p.min_window_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--min_window_s must be >= 0 (got ", p.min_window_s,
        ") and --min_window_steps >= 1 (got ", p.min_window_steps, ")"));
  }
  p.network = network;
  RS_RETURN_IF_ERROR(p.network.Validate());
  RS_ASSIGN_OR_RETURN(p.worker_bin, options.worker_bin);
  RS_ASSIGN_OR_RETURN(p.registered, ListStrategies(p.worker_bin));
  RS_ASSIGN_OR_RETURN(p.strategies,
                      Plan(p.registered, options.sweep.strategies));
  if (options.workload.gpu_per_worker && options.workload.device != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpu_per_worker gives every CUDA worker a GPU of its own, but the "
        "workers run on --device=",
        options.workload.device,
        "; drop it (--nogpu_per_worker after a preset that sets it) or run "
        "with --device=cuda"));
  }
  if (options.workload.device == "cuda") {
    // Before anything slow (the DDP peer's check, the link measurement).
    RS_ASSIGN_OR_RETURN(p.gpus, GpusTheWorkersSee(p.worker_bin));
    std::vector<ListedStrategy> runnable;
    for (const ListedStrategy& s : p.strategies) {
      if (s.cuda_runs) {
        runnable.push_back(s);
      } else if (!options.sweep.strategies.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(s.name, " does not run on CUDA workers: ", s.cuda));
      } else {
        p.not_on_device.push_back(absl::StrCat(s.name, " (", s.cuda, ")"));
      }
    }
    p.strategies = std::move(runnable);
  }
  for (const ListedStrategy& s : p.strategies) {
    if (s.servers == ServerKind::kNone || !p.ps_server_bin.empty()) continue;
    RS_ASSIGN_OR_RETURN(p.ps_server_bin, options.ps_server_bin);
  }
  p.dir = dir;
  RS_RETURN_IF_ERROR(MakeDir(p.dir));
  p.extra = extra;
  p.worker_args = WorkerArgs(options.workload, p.training, extra);
  for (const char* flag : {"seed", "data_seed"}) {
    if (p.seeds > 1 && WorkerFlag(p.worker_args, flag).has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--seeds=", p.seeds, " sets every training run's --seed and "
          "--data_seed (1 to ", p.seeds, "); drop --", flag,
          " from the worker flags, or run with --seeds=1"));
    }
  }
  p.ddp = FindDdp(argv0, options.ddp, options.workload.model);
  // Flags that contradict each other stop the run; a missing torch only
  // drops the row.
  if (absl::IsInvalidArgument(p.ddp.status())) return p.ddp.status();
  if (!p.ddp.ok()) {
    std::fprintf(stderr, "compare: no PyTorch DDP row: %s\n",
                 std::string(p.ddp.status().message()).c_str());
  }
  if (options.cost_model.enabled) {
    absl::StatusOr<CostModelLink> made =
        MakeCostModelLink(p.network, p.worker_args, options.cost_model);
    if (!made.ok()) return Annotate(made.status(), "cost model");
    p.link = *made;
  }
  // The baselines (the plain one, then any with run flags) once, at
  // n = 1: they are the references the other rows are predicted from.
  for (const ListedStrategy& s : p.strategies) {
    if (s.name == "baseline") p.runs.push_back({s, 1});
  }
  for (int n : p.sweep) {
    for (size_t i = 1; i < p.strategies.size(); ++i) {
      if (p.strategies[i].name == "baseline") continue;
      p.runs.push_back({p.strategies[i], n});
    }
    if (p.ddp.ok()) p.runs.push_back({DdpListing(), n});
  }
  if (options.workload.device == "cuda") {
    LeaveOutRunsBeyondTheGpus(options.workload.gpu_per_worker, &p);
  }
  p.servers = options.sweep.servers;
  p.cores = ProbeHardware({}).cores;
  p.load_start = LoadAverage();
  p.server_args = {
      absl::StrCat("--failure_timeout_s=", options.workload.failure_timeout_s)};
  p.workload = options.workload;
  p.job = options.job;
  p.target_loss = options.sweep.target_loss;
  p.calibrate = options.cost_model.calibrate;
  return p;
}

}  // namespace ringside::compare
