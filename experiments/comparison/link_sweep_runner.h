// The links a compare invocation runs on, and its sweep on each: one link
// (the usual case) is one sweep, planned, run, reported (printed) and
// written into its folder; several links (--link_gbit or --link_latency_us
// lists) run the whole sweep once per link in <out_dir>/link_*/, then
// print and write the crossover table (crossover.{md,csv,json}) and the
// throughput-against-bandwidth plots. Where network namespaces cannot be
// made, a link sweep says so once, runs unshaped loopback only and
// predicts the shaped links from that run. Blocking (it runs every job);
// call from one thread.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_LINK_SWEEP_RUNNER_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_LINK_SWEEP_RUNNER_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiments/comparison/compare_options.h"
#include "experiments/comparison/sweep_plan.h"
#include "experiments/comparison/sweep_runner.h"
#include "experiments/calibration/calibration.h"
#include "experiments/job/netns_topology.h"

namespace ringside::compare {

// The links to run on, from `links` (each list checked): unshaped first,
// then by bandwidth and latency. A latency goes only with a shaped link
// (unless it is the only link asked for, which NetworkShape::Validate then
// refuses). INVALID_ARGUMENT naming the list or the link at fault.
absl::StatusOr<std::vector<NetworkShape>> LinkShapes(const LinkOptions& links);

// One link's sweep: its plan and what its runs gave.
struct LinkRun {
  SweepPlan plan;
  SweepOutcome outcome;
};

// Plans, runs, reports (printed) and writes the sweep on `network` into
// `dir` (and, with `results` not empty, that Markdown file), calibrating
// the cost model unless an earlier link `measured` it; `extra` are the
// flags after --, `command` the command line the report quotes. The
// planning's or the writing's error; failed runs are in the outcome.
absl::StatusOr<LinkRun> RunOneLink(
    const char* argv0, const std::vector<std::string>& extra,
    const std::string& command, const NetworkShape& network,
    const std::filesystem::path& dir, const std::string& results,
    const std::optional<Calibration>& measured, const CompareOptions& options);

// The sweep over several links `shapes` (LinkShapes) into
// `options.out_dir`, with the crossover report (also to
// `options.results_md` when given). The process's exit code: 0 when every
// run finished, 1 when one failed or nothing could be run or written (the
// error said on stderr).
int RunLinkSweep(const char* argv0, const std::vector<std::string>& extra,
                 const std::string& command,
                 const std::vector<NetworkShape>& shapes,
                 const CompareOptions& options);

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_LINK_SWEEP_RUNNER_H_
