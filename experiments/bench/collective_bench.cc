// collective_bench: nccl-tests-style float32 all-reduce sweep of our
// Collective ("ours", Gloo ring) against raw Gloo ("gloo") and Open MPI's
// MPI_Allreduce ("mpi") measured in the same run. --op=reduce_scatter or
// --op=allgatherv times the sharded pair instead (ours; raw Gloo's
// gloo::allgatherv for the latter; busbw = algbw * (n-1)/n).
//
//   bazel run //experiments/bench:collective_bench
//   bazel run //experiments/bench:collective_bench -- --ranks=4
//       --min_bytes=1M --max_bytes=64M --step_factor=2 --backends=ours,mpi
//
// Prints one nccl-tests table per backend (size, count, time, algbw, busbw,
// #wrong; algbw = S/t, busbw = algbw * 2(n-1)/n), then per size the time of
// each backend and the ratios ours/X. A backend that cannot run (mpirun
// missing or failing) says so in its table; the others still run.
// --json_out writes one JSON line per table row.
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/json_lines.h"
#include "common/status_macros.h"
#include "experiments/bench/collective_bench_backends.h"
#include "experiments/bench/collective_bench_harness.h"
#include "experiments/job/local_job.h"

ABSL_FLAG(int, ranks, 2, "Ranks (threads for ours/gloo, processes for mpi).");
ABSL_FLAG(std::string, min_bytes, "4K", "Smallest message (4096, 4K, 1M).");
ABSL_FLAG(std::string, max_bytes, "256M", "Largest message.");
ABSL_FLAG(int, step_factor, 4, "Ratio between consecutive sizes.");
ABSL_FLAG(int, iters, 100, "Timed iterations per size (before scaling).");
ABSL_FLAG(int, warmup_iters, 10, "Warm-up iterations per size (scaled too).");
ABSL_FLAG(std::string, iter_bytes_cap, "1G",
          "Cap on size x timed iterations: large sizes run max(2, cap/size) "
          "iterations.");
ABSL_FLAG(std::vector<std::string>, backends,
          std::vector<std::string>({"ours", "gloo", "mpi"}),
          "Backends to sweep, in table order; the first is the subject of "
          "the ratios.");
ABSL_FLAG(std::string, json_out, "", "Also write one JSON line per row here.");
ABSL_FLAG(std::string, gloo_event_loop, "paced",
          "Event-loop scheduling of both Gloo backends, ours and raw Gloo "
          "(collectives/gloo_loop_pacing.h): paced, idle or normal (as "
          "PyTorch runs Gloo).");
ABSL_FLAG(int64_t, busy_us, -1,
          "How each timed call starts (ours, gloo): < 0 right behind the one "
          "before (nccl-tests' way); 0 after a barrier, the cores idle; > 0 "
          "after a barrier and this many microseconds of busy-waiting on "
          "every rank, as behind a training step's compute (not timed).");
ABSL_FLAG(std::string, op, "allreduce",
          "What to time: allreduce, reduce_scatter or allgatherv (the sharded "
          "pair over balanced shards of the whole buffer; busbw factor "
          "(n-1)/n). Backends that do not run it say so.");
ABSL_FLAG(int, op_timeout_s, 300, "Bound on one operation (ours, gloo).");
ABSL_FLAG(int, connect_timeout_s, 60, "Bound on rendezvous (ours, gloo).");
ABSL_FLAG(std::string, mpirun, "mpirun", "mpirun to launch the mpi backend.");
ABSL_FLAG(std::string, mpirun_args, "",
          "Extra mpirun arguments, space-separated, e.g. \"--mca btl "
          "self,tcp\" or \"--bind-to none\".");
ABSL_FLAG(std::string, mpi_peer, "",
          "mpi_allreduce_peer binary; default: from the runfiles.");
ABSL_FLAG(int, mpi_timeout_s, 1200, "Bound on the whole mpirun sweep.");

namespace ringside {
namespace {

absl::Status Run(const std::string& argv0) {
  SweepOptions sweep;
  RS_ASSIGN_OR_RETURN(sweep.min_bytes,
                      ParseBytes(absl::GetFlag(FLAGS_min_bytes)));
  RS_ASSIGN_OR_RETURN(sweep.max_bytes,
                      ParseBytes(absl::GetFlag(FLAGS_max_bytes)));
  RS_ASSIGN_OR_RETURN(sweep.iter_bytes_cap,
                      ParseBytes(absl::GetFlag(FLAGS_iter_bytes_cap)));
  sweep.step_factor = absl::GetFlag(FLAGS_step_factor);
  sweep.iters = absl::GetFlag(FLAGS_iters);
  sweep.warmup_iters = absl::GetFlag(FLAGS_warmup_iters);
  sweep.busy_before_us = absl::GetFlag(FLAGS_busy_us);
  RS_ASSIGN_OR_RETURN(std::vector<SizePlan> plan, PlanSweep(sweep));
  const int ranks = absl::GetFlag(FLAGS_ranks);
  RS_ASSIGN_OR_RETURN(const BenchOp op, ParseBenchOp(absl::GetFlag(FLAGS_op)));
  if (ranks < 1) return absl::InvalidArgumentError("--ranks must be >= 1");

  BenchBackendOptions options;
  RS_ASSIGN_OR_RETURN(options.gloo_event_loop,
                      ParseGlooEventLoop(absl::GetFlag(FLAGS_gloo_event_loop)));
  options.op_timeout = absl::Seconds(absl::GetFlag(FLAGS_op_timeout_s));
  options.connect_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_connect_timeout_s));
  options.mpirun = absl::GetFlag(FLAGS_mpirun);
  options.mpirun_args =
      absl::StrSplit(absl::GetFlag(FLAGS_mpirun_args), absl::ByAnyChar(" \t"),
                     absl::SkipEmpty());
  options.mpi_deadline = absl::Seconds(absl::GetFlag(FLAGS_mpi_timeout_s));
  options.mpi_peer = absl::GetFlag(FLAGS_mpi_peer);
  std::string peer_note;
  if (options.mpi_peer.empty()) {
    absl::StatusOr<std::string> peer =
        FindBinary(argv0, "experiments/bench/mpi_allreduce_peer");
    if (peer.ok()) {
      options.mpi_peer = *peer;
    } else {
      peer_note = peer.status().ToString();
    }
  }

  std::vector<AllReduceBackend> backends;
  for (const std::string& name : absl::GetFlag(FLAGS_backends)) {
    if (name == "mpi" && sweep.busy_before_us >= 0) {
      return absl::InvalidArgumentError(
          "--busy_us times the in-process backends (ours, gloo) only: the "
          "mpi peer times its own loop; leave mpi out of --backends");
    }
    RS_ASSIGN_OR_RETURN(AllReduceBackend b, MakeBackend(name, options));
    backends.push_back(std::move(b));
  }
  if (backends.empty()) return absl::InvalidArgumentError("no --backends");

  std::unique_ptr<JsonLinesWriter> json;
  std::FILE* json_file = nullptr;
  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    json_file = std::fopen(absl::GetFlag(FLAGS_json_out).c_str(), "w");
    if (json_file == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          "cannot open --json_out ", absl::GetFlag(FLAGS_json_out)));
    }
    json = std::make_unique<JsonLinesWriter>(json_file);
  }

  absl::PrintF(
      "# collective_bench: float32 in-place %s, %d ranks, %d "
      "sizes %d..%d B (x%d), %d iters + %d warm-up per size (fewer where "
      "size x iters > %s B), loopback, %u cores, Gloo event loops %s; "
      "%s\n\n",
      BenchOpName(op), ranks, plan.size(), plan.front().bytes, plan.back().bytes,
      sweep.step_factor, sweep.iters, sweep.warmup_iters,
      absl::GetFlag(FLAGS_iter_bytes_cap), std::thread::hardware_concurrency(),
      GlooEventLoopName(options.gloo_event_loop),
      sweep.busy_before_us < 0
          ? std::string("timed calls back to back")
          : sweep.busy_before_us == 0
                ? std::string("each timed call alone, after a barrier with "
                              "idle cores")
                : absl::StrCat("each timed call alone, after a barrier and ",
                               sweep.busy_before_us,
                               " us of busy-waiting on every rank (not "
                               "timed)"));
  std::fflush(stdout);

  std::vector<std::string> names;
  std::vector<SweepResult> results;
  for (const AllReduceBackend& b : backends) {
    SweepResult r = RunBackend(b, ranks, plan, op);
    if (b.name == "mpi" && !peer_note.empty() && !r.status.ok()) {
      r.status =
          absl::Status(r.status.code(),
                       absl::StrCat(r.status.message(), " (", peer_note, ")"));
    }
    absl::PrintF("%s\n", FormatBackendTable(b, ranks, r, op));
    std::fflush(stdout);
    if (json) {
      for (const SizeMeasurement& m : r.sizes) {
        json->Write(RowJson(b.name, ranks, m, op));
      }
      if (!r.status.ok()) {
        json->Write({{"backend", b.name},
                     {"ranks", ranks},
                     {"error", r.status.ToString()}});
      }
    }
    names.push_back(b.name);
    results.push_back(std::move(r));
  }

  if (backends.size() > 1) {
    const auto ours = std::find(names.begin(), names.end(), "ours");
    const int subject = ours == names.end() ? 0 : ours - names.begin();
    absl::PrintF("%s", FormatComparison(names, results, subject));
  }
  if (static_cast<unsigned>(ranks) > std::thread::hardware_concurrency()) {
    absl::PrintF(
        "\n# Note: %d ranks on %u cores: ranks share cores (mpirun runs "
        "oversubscribed); times include waiting for a core.\n",
        ranks, std::thread::hardware_concurrency());
  }
  json.reset();
  if (json_file != nullptr) std::fclose(json_file);
  int64_t wrong = 0;
  for (const SweepResult& r : results) {
    for (const SizeMeasurement& m : r.sizes) wrong += m.wrong;
  }
  if (wrong > 0) {
    return absl::InternalError(
        absl::StrCat(wrong, " wrong elements in the sweep (see #wrong)"));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  absl::Status s = ringside::Run(argv[0]);
  if (!s.ok()) {
    LOG(ERROR) << s;
    return 1;
  }
  return 0;
}
