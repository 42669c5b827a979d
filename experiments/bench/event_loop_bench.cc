// event_loop_bench: ringside's step under each scheduling of Gloo's event
// loop (worker --gloo_event_loop: paced, idle, normal; collectives/
// gloo_loop_pacing.h) in three conditions on this machine:
//   quiet:   nothing else runs; one compute thread per worker;
//   threads: every worker's compute threads alone fill the cores
//            (--eigen_threads = the cores);
//   busy:    as many outside busy processes at the normal policy as cores
//            (each spins in a loop), beside one compute thread per worker.
// Each repeat runs every condition with every policy in turn (interleaved,
// so a slow spell of the machine falls on all of them). Per condition it
// prints each policy's median step (the slowest rank's wall time over its
// measured steps) with the fastest and slowest repeat, the event loop's
// wait for a core per step (schedstat), and each policy's median over the
// better of idle's and normal's, the two policies the default must match.
// A run that passes --run_deadline_s is reported as starved (its step is
// then at least the deadline over the steps) and not run again.
//
//   event_loop_bench --strategy=ring --workers=2 --steps=150 --repeats=3
//     [--json_out=out/event_loop.json] -- --model=mlp   (after --: workers')
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/stopwatch.h"
#include "experiments/job/job_binaries.h"
#include "experiments/job/local_job.h"

ABSL_FLAG(std::string, strategy, "ring",
          "Strategy whose collectives run on Gloo (ring, fusion, zero1, ...).");
ABSL_FLAG(int, workers, 2, "Workers N.");
ABSL_FLAG(int, steps, 150, "Training steps per worker and run.");
ABSL_FLAG(int, warmup_steps, 10, "Warm-up steps excluded from the step.");
ABSL_FLAG(int, repeats, 3, "Runs of every condition and policy.");
ABSL_FLAG(std::string, conditions, "quiet,threads,busy",
          "Conditions to run: quiet, threads, busy.");
ABSL_FLAG(int, cores, 0, "Cores to fill (threads, busy); 0: this machine's.");
ABSL_FLAG(int, run_deadline_s, 30,
          "Wall-time bound of one run; past it the run is reported starved.");
ABSL_FLAG(bool, verbose, false, "Relay every process's log lines.");
ABSL_FLAG(std::string, json_out, "", "Also write every run here as JSON.");

namespace ringside {
namespace {

using nlohmann::json;

const std::vector<std::string> kPolicies = {"paced", "idle", "normal"};

// One run: the slowest rank's step, and the loop's wait for a core per
// step (rank mean); or starved (past the deadline).
struct RunResult {
  std::optional<double> step_s;
  double loop_wait_per_step_s = 0;
  bool starved = false;
  std::string error;
};

// `count` child processes spinning at the normal policy until killed (they
// die with this process too).
class BusyProcesses {
 public:
  explicit BusyProcesses(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile unsigned long spin = 0;
        for (;;) spin = spin + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  BusyProcesses(const BusyProcesses&) = delete;
  BusyProcesses& operator=(const BusyProcesses&) = delete;

 private:
  std::vector<pid_t> pids_;
};

RunResult RunOnce(const std::string& worker_bin, const std::string& policy,
                  const std::string& condition, int cores,
                  const std::vector<std::string>& extra, json* record) {
  LocalJobOptions options;
  options.worker_bin = worker_bin;
  options.strategy = absl::GetFlag(FLAGS_strategy);
  options.num_workers = absl::GetFlag(FLAGS_workers);
  options.rendezvous = true;
  options.relay_stderr = absl::GetFlag(FLAGS_verbose);
  options.deadline = absl::Seconds(absl::GetFlag(FLAGS_run_deadline_s));
  options.worker_args = {
      absl::StrCat("--steps=", absl::GetFlag(FLAGS_steps)),
      absl::StrCat("--warmup_steps=", absl::GetFlag(FLAGS_warmup_steps)),
      absl::StrCat("--gloo_event_loop=", policy),
      absl::StrCat("--eigen_threads=", condition == "threads" ? cores : 1)};
  options.worker_args.insert(options.worker_args.end(), extra.begin(),
                             extra.end());
  std::optional<BusyProcesses> busy;
  if (condition == "busy") busy.emplace(cores);
  absl::StatusOr<LocalJobResult> result = RunLocalJob(options);
  busy.reset();
  RunResult run;
  (*record)["condition"] = condition;
  (*record)["policy"] = policy;
  if (!result.ok()) {
    run.starved = result.status().code() == absl::StatusCode::kDeadlineExceeded;
    run.error = result.status().ToString();
    (*record)["error"] = run.error;
    (*record)["starved"] = run.starved;
    return run;
  }
  double step = 0, wait = 0;
  int ranks = 0;
  for (const json& final : result->finals) {
    const double measured = final.value("measured_steps", 0.0);
    if (measured <= 0) continue;
    step = std::max(step, final.value("wall_s", 0.0) / measured);
    if (final.contains("gloo_loop")) {
      wait += final["gloo_loop"].value("wait_s", 0.0) /
              std::max(1, absl::GetFlag(FLAGS_steps));
    }
    ++ranks;
  }
  if (ranks > 0) {
    run.step_s = step;
    run.loop_wait_per_step_s = wait / ranks;
  }
  (*record)["step_s"] = step;
  (*record)["loop_wait_per_step_s"] = run.loop_wait_per_step_s;
  (*record)["finals"] = result->finals;
  return run;
}

int Run(const char* argv0, const std::vector<std::string>& extra) {
  absl::StatusOr<std::string> worker_bin = WorkerBinary(argv0);
  if (!worker_bin.ok()) {
    std::fprintf(stderr, "event_loop_bench: %s\n",
                 worker_bin.status().ToString().c_str());
    return 2;
  }
  int cores = absl::GetFlag(FLAGS_cores);
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  const std::vector<std::string> conditions =
      absl::StrSplit(absl::GetFlag(FLAGS_conditions), ',', absl::SkipEmpty());
  for (const std::string& c : conditions) {
    if (c != "quiet" && c != "threads" && c != "busy") {
      std::fprintf(stderr,
                   "event_loop_bench: --conditions: unknown '%s' (quiet, "
                   "threads, busy)\n",
                   c.c_str());
      return 2;
    }
  }
  const int repeats = absl::GetFlag(FLAGS_repeats);
  // (condition, policy) -> steps, waits; starved pairs are not rerun.
  std::map<std::pair<std::string, std::string>, std::vector<double>> steps,
      waits;
  std::map<std::pair<std::string, std::string>, bool> starved;
  json runs = json::array();
  bool failed = false;
  const int total = repeats * static_cast<int>(conditions.size() *
                                               kPolicies.size());
  int index = 0;
  for (int r = 0; r < repeats; ++r) {
    for (const std::string& condition : conditions) {
      for (const std::string& policy : kPolicies) {
        ++index;
        const auto key = std::make_pair(condition, policy);
        if (starved[key]) continue;
        std::fprintf(stderr, "[%d/%d] %s, loop %s, repeat %d\n", index, total,
                     condition.c_str(), policy.c_str(), r + 1);
        json record = {{"repeat", r + 1}};
        const RunResult run =
            RunOnce(*worker_bin, policy, condition, cores, extra, &record);
        runs.push_back(record);
        if (run.starved) {
          starved[key] = true;
          std::fprintf(stderr, "  starved: past %d s\n",
                       absl::GetFlag(FLAGS_run_deadline_s));
        } else if (!run.step_s) {
          failed = true;
          std::fprintf(stderr, "  FAILED: %s\n", run.error.c_str());
        } else {
          steps[key].push_back(*run.step_s);
          waits[key].push_back(run.loop_wait_per_step_s);
          std::fprintf(stderr, "  %.2f ms a step\n", 1000 * *run.step_s);
        }
      }
    }
  }
  std::printf(
      "Gloo event-loop policies, %s at n = %d, %d steps (%d warm-up), %d "
      "repeats interleaved, %d cores\n\n",
      absl::GetFlag(FLAGS_strategy).c_str(), absl::GetFlag(FLAGS_workers),
      absl::GetFlag(FLAGS_steps), absl::GetFlag(FLAGS_warmup_steps), repeats,
      cores);
  std::printf(
      "| Condition | Loop | Step, median (ms) | Repeats: fastest–slowest (ms) "
      "| Loop's wait for a core per step (ms) | Median / better of idle and "
      "normal |\n| :-- | :-- | --: | --: | --: | --: |\n");
  const double lower_bound_s =
      static_cast<double>(absl::GetFlag(FLAGS_run_deadline_s)) /
      std::max(1, absl::GetFlag(FLAGS_steps));
  for (const std::string& condition : conditions) {
    std::map<std::string, double> median;
    for (const std::string& policy : kPolicies) {
      const auto key = std::make_pair(condition, policy);
      if (!steps[key].empty()) {
        median[policy] = Median(steps[key]);
      } else if (starved[key]) {
        median[policy] = lower_bound_s;  // at least
      }
    }
    std::optional<double> better;
    for (const char* p : {"idle", "normal"}) {
      if (median.count(p) && (!better || median[p] < *better)) {
        better = median[p];
      }
    }
    for (const std::string& policy : kPolicies) {
      const auto key = std::make_pair(condition, policy);
      const std::vector<double>& s = steps[key];
      std::string step_cell = "-", range = "-", wait = "-", ratio = "-";
      if (starved[key]) {
        step_cell = absl::StrFormat("> %.0f (starved)", 1000 * lower_bound_s);
        range = absl::StrFormat("%zu of %d finished", s.size(), repeats);
      }
      if (!s.empty()) {
        if (!starved[key]) {
          step_cell = absl::StrFormat("%.2f", 1000 * median[policy]);
        }
        const auto [fastest, slowest] = std::minmax_element(s.begin(), s.end());
        range = absl::StrFormat("%.2f–%.2f (%zu runs)", 1000 * *fastest,
                                1000 * *slowest, s.size());
        wait = absl::StrFormat("%.2f", 1000 * Median(waits[key]));
      }
      if (median.count(policy) && better) {
        ratio = absl::StrFormat("%s%.2f×", starved[key] ? "> " : "",
                                median[policy] / *better);
      }
      std::printf("| %s | %s | %s | %s | %s | %s |\n", condition.c_str(),
                  policy.c_str(), step_cell.c_str(), range.c_str(),
                  wait.c_str(), ratio.c_str());
    }
  }
  if (std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
        path[0] != '/' && cwd != nullptr) {
      path = absl::StrCat(cwd, "/", path);
    }
    std::ofstream file(path);
    file << json({{"strategy", absl::GetFlag(FLAGS_strategy)},
                  {"workers", absl::GetFlag(FLAGS_workers)},
                  {"steps", absl::GetFlag(FLAGS_steps)},
                  {"cores", cores},
                  {"runs", runs}})
                .dump(2)
         << "\n";
    if (!file) {
      std::fprintf(stderr, "event_loop_bench: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ringside's step under each Gloo event-loop policy (paced, idle, "
      "normal), quiet, with compute threads filling the cores, and beside "
      "busy processes; flags after -- go to every worker.");
  const std::vector<std::string> extra =
      ringside::SplitPassThroughArgs(&argc, argv);
  if (const absl::Status parsed = ringside::ParseOwnFlags(argc, argv);
      !parsed.ok()) {
    std::fprintf(stderr, "event_loop_bench: %s\n",
                 std::string(parsed.message()).c_str());
    return 2;
  }
  return ringside::Run(argv[0], extra);
}
