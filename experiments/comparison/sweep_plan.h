// Planning a compare sweep on one link: the options checked, the worker
// and server binaries and the DDP peer found, the strategies and worker
// counts put in running order (the baseline once with one worker, then
// every strategy and the DDP row at each n), the output folder made and
// the cost model's link measured before the runs load the machine.
// Blocking (it runs the worker's --list_strategies, the DDP peer's check
// and the link measurement); no state of its own, call from one thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_PLAN_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_PLAN_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/cost_model_link.h"
#include "experiments/calibration/calibration.h"
#include "experiments/comparison/ddp_row.h"
#include "experiments/job/local_job.h"
#include "experiments/job/netns_topology.h"
#include "worker/training_flags.h"

namespace ringside::compare {

// One run of a round: a strategy (or the DDP row) at `workers` workers.
struct Run {
  ListedStrategy strategy;
  int workers = 1;
};

// A run left out of a --device=cuda sweep: it needs more GPUs than this
// machine's workers see (GpusNeeded), and the reason says so.
struct NotRun {
  Run run;
  int gpus_needed = 0;
  std::string reason;
};

// What one compare invocation will run: the flags checked, the binaries
// found, the strategies and worker counts in order, the cost model's link
// (measured before the runs load the machine).
struct SweepPlan {
  std::vector<int> sweep;  // worker counts n
  NetworkShape network;
  std::string worker_bin, ps_server_bin;   // ps_server_bin empty: none needed
  std::vector<ListedStrategy> registered;  // worker --list_strategies
  std::vector<ListedStrategy> strategies;  // chosen, baseline first
  // Registered strategies left out because the workers' device cannot run
  // them (--device=cuda), with the listing's reason.
  std::vector<std::string> not_on_device;
  std::vector<Run> runs;      // in running order, per round
  // --device=cuda: the GPUs the workers see (worker --count_gpus), and the
  // runs left out for want of GPUs; 0 and none on CPU workers.
  int gpus = 0;
  std::vector<NotRun> not_run;
  int repeats = 3;            // timing rounds (--repeats); 0: training only
  // Training runs per row, seeds 1..seeds (--seeds): each with the
  // workers' --seed and --data_seed at that seed; 1: the workers' own.
  int seeds = 1;
  double min_window_s = 2.0;  // --min_window_s
  int min_window_steps = 30;  // --min_window_steps
  std::filesystem::path dir;  // --out_dir
  std::vector<std::string> extra;        // the flags after --
  std::vector<std::string> worker_args;  // every flag the workers get
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
  // The options the runs and the report need besides the above.
  WorkloadOptions workload;
  JobSettings job;
  double target_loss = 0;  // --target_loss
  bool calibrate = true;   // --calibrate
};

// The plan of the sweep on `network` whose outputs go to `dir` (made
// here), `extra` being the flags after --. INVALID_ARGUMENT naming the
// option at fault; NOT_FOUND for a binary that is needed and missing;
// FAILED_PRECONDITION for --device=cuda where the workers see no GPU; the
// worker's or the link measurement's error. Says on stderr when the DDP
// row is absent.
absl::StatusOr<SweepPlan> PlanSweep(const char* argv0,
                                    const std::vector<std::string>& extra,
                                    const NetworkShape& network,
                                    const std::filesystem::path& dir,
                                    const CompareOptions& options);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_SWEEP_PLAN_H_
