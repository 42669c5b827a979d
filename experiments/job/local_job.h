// Local job: runs one training job on this machine as K parameter-server
// processes plus N worker processes, the way `launch` and `compare` need it.
// Servers start first on port 0; their {"event":"listening","port":P} lines
// give the ports that the workers then get as --servers=host:P,... Every
// worker's JSON-lines records are collected; any failing process fails the
// whole job (see ProcessGroup). With a timeline, every worker writes its own
// Chrome-trace part and the parts are merged into one file at the end.
//
// Thread-safety: RunLocalJob and ListStrategies are blocking and may run on
// several threads at once (each call owns its processes); the on_record
// callback runs on the calling thread. FindBinary is thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_JOB_LOCAL_JOB_H_
#define RINGSIDE_EXPERIMENTS_JOB_LOCAL_JOB_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/grpc_credentials.h"
#include "experiments/job/netns_topology.h"

namespace ringside {

struct LocalJobOptions {
  // Path of the ps_server binary. Required when num_servers > 0.
  std::string ps_server_bin;
  // Path of the worker binary. Required.
  std::string worker_bin;
  // Arguments right after worker_bin, before --strategy: the script when
  // worker_bin is an interpreter (the PyTorch DDP peer). Default none.
  std::vector<std::string> worker_prefix_args;
  // Sync strategy name passed as --strategy to every worker. Required.
  std::string strategy;
  // Number of worker processes N (ranks 0..N-1). Default 1, must be >= 1.
  int num_workers = 1;
  // Number of ps_server processes K (shards 0..K-1). Default 0: no servers
  // and no --servers flag for the workers.
  int num_servers = 0;
  // Extra flags appended to every worker's command line, after --strategy,
  // --rank, --world_size and --servers (so they may override them).
  std::vector<std::string> worker_args;
  // Extra flags appended to every server's command line. Default none.
  std::vector<std::string> server_args;
  // Extra "KEY=VALUE" environment for every process. Default none.
  std::vector<std::string> env;
  // Job security (common/security_flags.h), given to every server and
  // worker before server_args/worker_args: --auth_token_file and the TLS
  // files --tls_cert, --tls_key, --tls_ca (and --tls_server_name). Empty
  // fields: not passed. Default: none.
  GrpcSecurityFiles security;
  // With no security.auth_token_file: write a fresh random token to a
  // private (0700 folder, 0600 file) temporary file for this job, give it to
  // every process, and delete it when the job ends. Default false.
  bool generate_auth_token = false;
  // Interface the servers bind to and workers connect to.
  std::string host = "127.0.0.1";
  // Wall time for the whole job; past it everything is killed and the job
  // fails with DEADLINE_EXCEEDED. Default 10 minutes.
  absl::Duration deadline = absl::Minutes(10);
  // How long each server may take to print its listening line. Default 30 s.
  absl::Duration listen_timeout = absl::Seconds(30);
  // How long servers may take to exit by themselves once every worker has
  // finished; then they are terminated and a warning is recorded.
  // Default 30 s.
  absl::Duration server_exit_timeout = absl::Seconds(30);
  // SIGTERM-to-SIGKILL grace when shutting processes down. Default 5 s.
  absl::Duration kill_grace = absl::Seconds(5);
  // The strategy needs the job's rendezvous store: rank 0 starts first with
  // --master_addr=host --master_port=0, and once it announces
  // {"event":"rendezvous","master_port":P} the other ranks start with
  // --master_port=P (race-free port choice). Default false.
  bool rendezvous = false;
  // Where to write the job's Chrome-trace timeline (common/timeline.h;
  // opens in ui.perfetto.dev). Each worker gets --timeline=
  // TimelinePartPath(timeline, rank) (before worker_args); once the workers
  // have exited the parts are merged into this path and deleted. If the job
  // fails, whatever parts exist are merged on a best-effort basis (kept when
  // that fails). Its folder must exist. Default empty: no timeline.
  std::string timeline;
  // Network shaping (experiments/job/netns_topology.h): when enabled, every
  // server and worker runs in its own network namespace behind a link of
  // this bandwidth and latency (addresses 10.77.0.x instead of `host`; each
  // worker gets --transport_host=<its address> after worker_args). Where
  // namespaces cannot be made the job runs on loopback and says so in
  // LocalJobResult::warnings. Must be valid. Default: off (loopback).
  NetworkShape network;
  // With `network` shaped: the servers run in rank 0's namespace, on its
  // address and behind its link (JobNetwork's servers_beside_rank0:
  // PyTorch DataParallel's layout). On loopback it changes nothing and
  // LocalJobResult::warnings says so. Default false.
  bool servers_beside_rank0 = false;
  // Keep every "step" record in LocalJobResult::steps. Default false.
  bool keep_steps = false;
  // Relay the processes' stderr to ours, prefixed "[label] ". Default true.
  bool relay_stderr = true;
  // Called with (rank, the line as printed, the line parsed) for every JSON
  // object line a worker prints, as it arrives. Default none. Non-JSON
  // stdout lines go to stderr instead.
  std::function<void(int rank, absl::string_view line,
                     const nlohmann::json& record)>
      on_record;
  // Called with (shard, the line as printed, the line parsed) for every
  // JSON object line a server prints after its listening line (e.g.
  // server_stats, server_final), as it arrives. Default none: such lines
  // go to stderr like non-JSON ones.
  std::function<void(int shard, absl::string_view line,
                     const nlohmann::json& record)>
      on_server_record;
};

struct LocalJobResult {
  // The "final" record of each worker; index = rank.
  std::vector<nlohmann::json> finals;
  // The "step" records of each worker (index = rank) if keep_steps.
  std::vector<std::vector<nlohmann::json>> steps;
  // Port of each server; index = shard.
  std::vector<int> server_ports;
  // The "server_final" record of each server that printed one; index =
  // shard (an empty object where none came).
  std::vector<nlohmann::json> server_finals;
  // Seconds from starting the first process to the last worker's exit.
  double wall_s = 0;
  // Non-fatal problems, e.g. a server that had to be terminated, or
  // "network shaping unavailable: <why>; ran on loopback".
  std::vector<std::string> warnings;
  // The network the job ran on (JobNetwork::Describe), e.g. "loopback" or
  // "netns: 1 Gbit/s links, 50 us latency".
  std::string network;
};

// Runs the job to completion. Blocking. Fails with INVALID_ARGUMENT on bad
// options (an unwritable timeline folder included), with the ProcessGroup
// error (INTERNAL naming the process, or DEADLINE_EXCEEDED) when a process
// fails or time runs out, with DATA_LOSS when a worker exits 0 without a
// final record, and with the MergeTimelines error when the timeline parts
// of a successful job cannot be merged.
absl::StatusOr<LocalJobResult> RunLocalJob(const LocalJobOptions& options);

// The part of `timeline` that worker `rank` writes: "<timeline>.rank<r>.json"
// (rank < 0: "<timeline>.rank{rank}.json", the worker flag's pattern).
std::string TimelinePartPath(const std::string& timeline, int rank);

// How many servers a strategy needs, as `worker --list_strategies` says.
enum class ServerKind { kNone, kOne, kSharded };

// A strategy as `worker --list_strategies` describes it (the worker's
// registry, worker/sync_strategy.h's StrategyInfo, is the one source).
struct ListedStrategy {
  std::string name;  // e.g. "sps"
  ServerKind servers = ServerKind::kNone;
  bool store = false;        // needs the job's rendezvous store
  // Its servers only sum and keep no state (the registry's
  // StrategyInfo::summation_servers): started without checkpoint flags.
  bool summation_servers = false;
  std::string display_name;  // the row name, e.g. "SPS"; default: name
  int study_order = 100;     // position in the study's order
  // The cost model's strategy that predicts it ("" = none) and the bytes
  // on the wire per model byte (fp16: 0.5).
  std::string modelled_as;
  double wire_bytes_per_model_byte = 1.0;
  // How its updates differ from the exact strategies' ("" = as its formula
  // says; the registry's StrategyInfo::updates).
  std::string updates;
  // Whether a sweep runs it when no strategies are named (the registry's
  // StrategyInfo::default_sweep).
  bool default_sweep = true;
  // The strategy-specific worker flags it reads (no "--").
  std::vector<std::string> options;
  // Worker flags a study passes before the user's ("--flag=value"; the
  // registry's StrategyInfo::study_flags).
  std::vector<std::string> study_flags;
  // The options its rows' variant states ("staleness": "τ=2";
  // StrategyInfo::variant_options): a sweep does not label them again.
  std::vector<std::string> variant_options;
  // Whether CUDA workers can run it (the listing's "cuda_runs"), and what
  // the listing says of CUDA workers ("cuda").
  bool cuda_runs = true;
  std::string cuda;
  // Whether its CUDA workers need a GPU each (NCCL on device buffers: the
  // listing's "gpu_per_rank"); the others may share one.
  bool gpu_per_rank = false;
  // A sweep's own worker flags for this entry ("--staleness=2"), passed
  // after every other: compare's --strategies=async_ps@staleness=2 runs
  // one strategy at several settings. Empty in the listing.
  std::vector<std::string> run_flags;
  // A sweep's entry placed its servers beside rank 0
  // (LocalJobOptions::servers_beside_rank0; compare's
  // --strategies=sps@placement=rank0). False in the listing.
  bool servers_beside_rank0 = false;

  bool Reads(const std::string& flag) const;
};

// Runs `worker_bin --list_strategies` and parses its lines
// {"name":"sps","servers":"none"|"one"|"sharded", ...the optional fields
// above}. Blocking, bounded by `timeout`.
absl::StatusOr<std::vector<ListedStrategy>> ListStrategies(
    const std::string& worker_bin, absl::Duration timeout = absl::Seconds(30));

// The CUDA devices a worker process started from `worker_bin` would see
// (`worker_bin --count_gpus`): the count, and when it is 0 why (a build
// without CUDA, no driver, no GPU). Blocking, bounded by `timeout`; an
// error when the worker does not run or prints something else.
struct WorkerGpus {
  int count = 0;
  std::string why;  // set when count is 0
};
absl::StatusOr<WorkerGpus> CountWorkerGpus(
    const std::string& worker_bin, absl::Duration timeout = absl::Seconds(60));

// `worker_args` without the strategy-specific flags (those some strategy in
// `listed` reads) that `strategy` does not read, which the worker would
// refuse; each one dropped is appended to `dropped` as written. Handles
// --flag=value, --flag value, --flag and --noflag.
std::vector<std::string> WorkerArgsFor(
    const ListedStrategy& strategy, const std::vector<ListedStrategy>& listed,
    const std::vector<std::string>& worker_args,
    std::vector<std::string>* dropped);

// Number of servers to start for `kind`: 0, 1, or `sharded_count`.
int ServersFor(ServerKind kind, int sharded_count);

// Path of `workspace_path` (e.g. "server/ps_server") in this binary's
// runfiles. NOT_FOUND when there are no runfiles or no executable there.
absl::StatusOr<std::string> FindBinary(const std::string& argv0,
                                       absl::string_view workspace_path);

// A worker's Gloo event loop waited for a core (runnable, not running) for
// more than this share of its measured wall time: starved.
inline constexpr double kStarvedLoopShare = 0.5;

// One warning per worker final record (index = rank) whose "gloo_loop"
// (collectives/gloo_loop_pacing.h) says its event loop starved, naming the
// rank, the seconds and the remedy; RunLocalJob adds them to its warnings.
std::vector<std::string> StarvedLoopWarnings(
    const std::vector<nlohmann::json>& finals);

// Splits argv at the first "--": returns the arguments after it and sets
// *argc so that argv[0..*argc) holds only those before it.
std::vector<std::string> SplitPassThroughArgs(int* argc, char** argv);

// absl::ParseCommandLine on argv[0..argc) (the part before "--"), then
// INVALID_ARGUMENT "unexpected argument 'X' (worker flags go after --)" when
// a positional argument is left over. Exits like ParseCommandLine on a bad
// or unknown flag.
absl::Status ParseOwnFlags(int argc, char** argv);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_LOCAL_JOB_H_
