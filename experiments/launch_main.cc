// launch: runs one local training job (K ps_server + N worker processes)
// and echoes the workers' JSON lines to stdout, each with its "rank".
//
//   launch --strategy=sps --workers=4 [--servers=K] --steps=40
//     --batch_size=32 [--timeline=t.json] -- --model=mlp --lr=0.1
//   (after --: flags for every worker)
//
// --timeline=PATH writes one Chrome-trace timeline of every worker (merged
// from per-rank parts PATH.rank<r>.json); open it in ui.perfetto.dev.
// --link_gbit=B [--link_latency_us=L] runs every process in its own network
// namespace behind a shaped link (experiments/job/netns_topology.h; root only,
// else it runs on loopback and says so).
// --auth_token_file and --tls_cert/--tls_key/--tls_ca go to every process;
// without --auth_token_file the job gets a fresh random token of its own.
// Exits 1 with the failing process's message if any process fails.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/security_flags.h"
#include "experiments/job/job_binaries.h"
#include "worker/training_flags.h"
#include "experiments/job/local_job.h"
#include "experiments/job/netns_topology.h"

ABSL_FLAG(std::string, strategy, "baseline",
          "Sync strategy (see worker --list_strategies).");
ABSL_FLAG(int, workers, 1, "Number of worker processes N.");
ABSL_FLAG(int, servers, -1,
          "Number of ps_server processes K; -1 = what the strategy needs "
          "(0 for none, 1 for one, 1 for sharded).");
ABSL_FLAG(int, steps, 40, "Training steps per worker (--steps).");
ABSL_FLAG(int, batch_size, 32, "Local batch size per worker (--batch_size).");
ABSL_FLAG(std::string, device, "cpu",
          "Workers' compute device (--device): cpu or cuda (NCCL strategies "
          "need one GPU per worker; --gpus=... after -- maps them).");
ABSL_FLAG(absl::Duration, deadline, absl::Minutes(10),
          "Wall-time limit for the whole job.");
ABSL_FLAG(bool, generate_auth_token, true,
          "Without --auth_token_file, give the job a fresh random token "
          "(a private temporary file, deleted afterwards) so that only its "
          "own processes can call its servers; --nogenerate_auth_token runs "
          "without a token.");
ABSL_FLAG(std::string, timeline, "",
          "Write the job's Chrome-trace timeline (all workers, merged) here; "
          "open it in ui.perfetto.dev. Empty: none.");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Checkpoint folder given to the servers (one file per shard) and "
          "the workers (rank 0's allreduce.ckpt); relative to the directory "
          "launch was started from.");
ABSL_FLAG(int64_t, checkpoint_every, 0, "Checkpoint every N steps (0: never).");
ABSL_FLAG(bool, resume, false,
          "Continue from the checkpoints in --checkpoint_dir.");
ABSL_FLAG(double, link_gbit, 0,
          "Network shaping: run every server and worker in its own network "
          "namespace behind a link of this many Gbit/s per direction (needs "
          "root and iproute2; otherwise runs on loopback and says so). "
          "0: no shaping, loopback.");
ABSL_FLAG(double, link_latency_us, 0,
          "Network shaping: one-way latency between processes in "
          "microseconds (netem; needs --link_gbit > 0).");
ABSL_FLAG(std::string, link_tcp_congestion,
          ringside::NetworkShape().tcp_congestion,
          ringside::kLinkTcpCongestionHelp);
ABSL_FLAG(double, failure_timeout_s, 30,
          "Passed to every worker and server: a peer silent for longer than "
          "this fails the job, naming the lost rank or server (s; 0: off).");

namespace ringside {
namespace {

// Servers to start for `info`, honouring --servers when it fits.
absl::StatusOr<int> NumServers(const ListedStrategy& info, int flag) {
  switch (info.servers) {
    case ServerKind::kNone:
      if (flag > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(info.name, " uses no parameter server"));
      }
      return 0;
    case ServerKind::kOne:
      if (flag != -1 && flag != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(info.name, " uses exactly one parameter server"));
      }
      return 1;
    case ServerKind::kSharded:
      if (flag == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(info.name, " needs at least one server"));
      }
      return flag < 0 ? 1 : flag;
  }
  return 0;
}

// `path` made absolute; a relative path is relative to where the user typed
// the command (under `bazel run` we run in the runfiles tree).
std::string FromUserDirectory(const std::string& path) {
  std::filesystem::path p = path;
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      p.is_relative() && cwd != nullptr) {
    p = std::filesystem::path(cwd) / p;
  }
  return std::filesystem::absolute(p).string();
}

// The worker's line as printed, with "rank":r first if it has no rank.
std::string WithRank(int rank, absl::string_view line,
                     const nlohmann::json& record) {
  std::string out(line);
  if (record.contains("rank")) return out;
  const size_t brace = out.find('{');  // a JSON object starts with '{'
  out.insert(brace + 1,
             absl::StrCat("\"rank\":", rank, record.empty() ? "" : ","));
  return out;
}

absl::Status Run(const char* argv0, const std::vector<std::string>& extra) {
  NetworkShape network;
  network.link_gbit = absl::GetFlag(FLAGS_link_gbit);
  network.link_latency_us = absl::GetFlag(FLAGS_link_latency_us);
  network.tcp_congestion = absl::GetFlag(FLAGS_link_tcp_congestion);
  if (absl::Status s = network.Validate(); !s.ok()) return s;
  absl::StatusOr<TrainingFlags> checked =
      TrainingFlagsFromFlags(absl::GetFlag(FLAGS_workers));
  if (!checked.ok()) return checked.status();
  const TrainingFlags training_flags = *checked;
  absl::StatusOr<std::string> worker_bin = WorkerBinary(argv0);
  if (!worker_bin.ok()) return worker_bin.status();
  absl::StatusOr<std::vector<ListedStrategy>> strategies =
      ListStrategies(*worker_bin);
  if (!strategies.ok()) return strategies.status();
  const std::string strategy = absl::GetFlag(FLAGS_strategy);
  const ListedStrategy* info = nullptr;
  std::vector<std::string> names;
  for (const ListedStrategy& s : *strategies) {
    names.push_back(s.name);
    if (s.name == strategy) info = &s;
  }
  if (info == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown strategy '", strategy,
                     "'; registered: ", absl::StrJoin(names, ", ")));
  }
  absl::StatusOr<int> servers = NumServers(*info, absl::GetFlag(FLAGS_servers));
  if (!servers.ok()) return servers.status();

  LocalJobOptions options;
  options.worker_bin = *worker_bin;
  if (*servers > 0) {
    absl::StatusOr<std::string> ps = PsServerBinary(argv0);
    if (!ps.ok()) return ps.status();
    options.ps_server_bin = *ps;
  }
  options.strategy = strategy;
  options.num_workers = absl::GetFlag(FLAGS_workers);
  options.rendezvous = info->store;
  options.num_servers = *servers;
  options.deadline = absl::GetFlag(FLAGS_deadline);
  options.network = network;
  options.security = SecurityFilesFromFlags();
  options.generate_auth_token = absl::GetFlag(FLAGS_generate_auth_token);
  if (const std::string t = absl::GetFlag(FLAGS_timeline); !t.empty()) {
    options.timeline = FromUserDirectory(t);
  }
  const std::string failure_timeout = absl::StrCat(
      "--failure_timeout_s=", absl::GetFlag(FLAGS_failure_timeout_s));
  options.worker_args = {
      absl::StrCat("--steps=", absl::GetFlag(FLAGS_steps)),
      absl::StrCat("--batch_size=", absl::GetFlag(FLAGS_batch_size)),
      failure_timeout};
  const std::vector<std::string> training = training_flags.WorkerArgs();
  options.worker_args.insert(options.worker_args.end(), training.begin(),
                             training.end());
  options.server_args = {failure_timeout};
  if (const std::string device = absl::GetFlag(FLAGS_device); device != "cpu") {
    options.worker_args.push_back(absl::StrCat("--device=", device));
  }
  if (const std::string dir = absl::GetFlag(FLAGS_checkpoint_dir);
      !dir.empty()) {
    std::vector<std::string> checkpoint = {
        absl::StrCat("--checkpoint_dir=", FromUserDirectory(dir)),
        absl::StrCat("--checkpoint_every=",
                     absl::GetFlag(FLAGS_checkpoint_every)),
        absl::StrCat("--resume=",
                     absl::GetFlag(FLAGS_resume) ? "true" : "false")};
    options.worker_args.insert(options.worker_args.end(), checkpoint.begin(),
                               checkpoint.end());
    // Summation servers keep no state: they start fresh on a resume.
    if (!info->summation_servers) {
      options.server_args.insert(options.server_args.end(),
                                 checkpoint.begin(), checkpoint.end());
    }
  }
  options.worker_args.insert(options.worker_args.end(), extra.begin(),
                             extra.end());
  options.on_record = [](int rank, absl::string_view line,
                         const nlohmann::json& record) {
    std::printf("%s\n", WithRank(rank, line, record).c_str());
    std::fflush(stdout);
  };
  absl::StatusOr<LocalJobResult> result = RunLocalJob(options);
  if (!result.ok()) return result.status();
  for (const std::string& w : result->warnings) {
    std::fprintf(stderr, "launch: warning: %s\n", w.c_str());
  }
  std::fprintf(stderr, "launch: %s finished: %d workers, %d servers, %.2f s\n",
               strategy.c_str(), options.num_workers, options.num_servers,
               result->wall_s);
  if (network.enabled()) {
    std::fprintf(stderr, "launch: network: %s\n", result->network.c_str());
  }
  if (!options.timeline.empty()) {
    std::fprintf(stderr, "launch: timeline %s (open in ui.perfetto.dev)\n",
                 options.timeline.c_str());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs K ps_server + N worker processes locally; flags after -- go to "
      "every worker.");
  const std::vector<std::string> extra =
      ringside::SplitPassThroughArgs(&argc, argv);
  if (const absl::Status parsed = ringside::ParseOwnFlags(argc, argv);
      !parsed.ok()) {
    std::fprintf(stderr, "launch: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  const absl::Status status = ringside::Run(argv[0], extra);
  if (!status.ok()) {
    std::fprintf(stderr, "launch: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
