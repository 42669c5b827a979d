// ps_server: one parameter server process (one shard of the key space).
//
//   ps_server --port=P --num_workers=N [--shard=i --num_shards=K]
//             [--auth_token_file=F] [--tls_cert=C --tls_key=K [--tls_ca=CA]]
//
// Prints {"event":"listening","port":P,"shard":i} on stdout once serving
// (with --port=0 the OS picks P), then serves until every worker has called
// Finish (exit 0), a worker is lost (silent for --failure_timeout_s: exit 1
// after a grace) or --max_job_s passes without all finishing (exit 1). The
// last line is {"event":"server_final",...} with the update accounting
// ("updates": pushes accepted per (rank, chunk), optimizer steps per chunk,
// refused duplicates) and, after a failure, "job_failure". With
// --stats_every_steps=N it also prints {"event":"server_stats",...} lines
// (version, rss_bytes) every N steps.
#include <glog/logging.h>
#include <grpcpp/grpcpp.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/json_lines.h"
#include "common/output_path.h"
#include "common/process_memory.h"
#include "common/security_flags.h"
#include "server/ps_server_runner.h"

ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on.");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 lets the OS pick one.");
ABSL_FLAG(int, bulk_port, 0,
          "Port of the bulk data path (workers' --ps_transport=tcp; told to "
          "them at registration); 0 lets the OS pick one, -1 turns it off. "
          "Not started with TLS: the bulk path authenticates but does not "
          "encrypt.");
ABSL_FLAG(int, num_workers, 1, "Workers in the job (N >= 1).");
ABSL_FLAG(int, shard, 0, "This server's shard index in [0, num_shards).");
ABSL_FLAG(int, num_shards, 1, "Parameter servers in the job (K >= 1).");
ABSL_FLAG(double, max_job_s, 3600,
          "Exit non-zero if the workers have not all finished after this "
          "many seconds.");
ABSL_FLAG(double, max_pull_wait_s, 120,
          "Longest a pull waits for a version (seconds).");
ABSL_FLAG(int, max_message_mb, 64, "Largest gRPC message accepted (MiB).");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Where this shard's checkpoint (shard-<i>-of-<K>.ckpt) is written "
          "and, with --resume, read.");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "Checkpoint parameters, optimizer state and step every N steps "
          "(0: never); atomic (temp file + rename) and checksummed.");
ABSL_FLAG(bool, resume, false,
          "Continue from the checkpoint in --checkpoint_dir; workers then "
          "resume at its step. A missing, corrupt or mismatched checkpoint "
          "is refused.");
ABSL_FLAG(double, failure_timeout_s, 30,
          "A registered worker silent (no heartbeat, no RPC) for longer than "
          "this fails the job: pending and later pulls/pushes get "
          "UNAVAILABLE naming the lost rank and its last step, and the "
          "server exits 1 after a grace of a third of this (s; 0: off).");
ABSL_FLAG(int64_t, stats_every_steps, 0,
          "Print {\"event\":\"server_stats\",\"version\",\"rss_bytes\",...} "
          "each time the shard's version passes a multiple of this (0: "
          "never).");

namespace ringside {
namespace {

// How often the main thread looks at the version for --stats_every_steps.
constexpr absl::Duration kStatsPoll = absl::Milliseconds(20);

// The shard's update accounting as JSON fields (see ParamShard::Counts).
nlohmann::json CountsJson(const ParamShard::UpdateCounts& c) {
  return {{"chunks", c.chunks},
          {"pushes_min", c.pushes_min},
          {"pushes_max", c.pushes_max},
          {"pushes_per_rank", c.pushes_per_rank},
          {"applied_min", c.applied_min},
          {"applied_max", c.applied_max},
          {"duplicates_refused", c.duplicates_refused},
          {"wrong_step_refused", c.wrong_step_refused},
          {"min_version", c.min_version},
          {"max_version", c.max_version}};
}

int Run() {
  // Chunk messages are MiB-sized; with glibc's default, growing mmap
  // threshold, freed ones stay cached in per-thread arenas and the
  // server's resident memory creeps up with the number of RPC threads.
  // A fixed threshold returns them to the OS.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // One heap arena: each RPC thread otherwise gets an arena of its own that
  // keeps the sub-threshold blocks it freed. sps, N = 4, a 68 MB model
  // (parity_bench's ps memory pair): peak RSS 4.4x -> 3.5x the model's
  // bytes (its state is 3x), step throughput unchanged (launch
  // --strategy=sps --workers=2: 3422-3628 vs 3650-3851 samples/s).
  mallopt(M_ARENA_MAX, 1);
  PsServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.bulk_port = absl::GetFlag(FLAGS_bulk_port);
  options.max_message_mb = absl::GetFlag(FLAGS_max_message_mb);
  options.shard.num_workers = absl::GetFlag(FLAGS_num_workers);
  options.shard.shard = absl::GetFlag(FLAGS_shard);
  options.shard.num_shards = absl::GetFlag(FLAGS_num_shards);
  options.shard.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  options.shard.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.service.max_pull_wait =
      absl::Seconds(absl::GetFlag(FLAGS_max_pull_wait_s));
  absl::StatusOr<GrpcSecurity> security = SecurityFromFlags();
  if (!security.ok()) {
    LOG(ERROR) << "bad flags: " << security.status().message();
    return 2;
  }
  options.security = *std::move(security);
  // A checkpoint folder that cannot be written fails now, not at the first
  // checkpoint after training has started.
  if (options.shard.checkpoint_every > 0 &&
      !options.shard.checkpoint_dir.empty()) {
    if (absl::Status s =
            PrepareOutputDir(options.shard.checkpoint_dir, "checkpoint_dir");
        !s.ok()) {
      LOG(ERROR) << "bad flags: " << s.message();
      return 2;
    }
  }
  const double failure_timeout_s = absl::GetFlag(FLAGS_failure_timeout_s);
  if (failure_timeout_s < 0) {
    LOG(ERROR) << "--failure_timeout_s must be >= 0, got " << failure_timeout_s;
    return 2;
  }
  if (failure_timeout_s > 0) {
    options.failure_timeout = absl::Seconds(failure_timeout_s);
  }
  const int64_t stats_every = absl::GetFlag(FLAGS_stats_every_steps);
  absl::StatusOr<std::unique_ptr<PsServer>> server = PsServer::Start(options);
  if (!server.ok()) {
    LOG(ERROR) << server.status();
    return absl::IsInvalidArgument(server.status()) ? 2 : 1;
  }
  ParamShard& shard = (*server)->shard();
  JsonLinesWriter out;
  out.Write({{"event", "listening"},
             {"port", (*server)->port()},
             {"bulk_port", (*server)->bulk_port()},
             {"shard", options.shard.shard},
             {"num_shards", options.shard.num_shards}});
  LOG(INFO) << "parameter server shard " << options.shard.shard << "/"
            << options.shard.num_shards << " listening on port "
            << (*server)->port() << " for " << options.shard.num_workers
            << " workers (" << options.security.Describe() << ")";

  const absl::Time job_deadline =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_max_job_s));
  bool done = false;
  int64_t next_stats = 0;  // the first sample once version 0 is in place
  while (true) {
    const absl::Time until =
        stats_every > 0 ? std::min(job_deadline, absl::Now() + kStatsPoll)
                        : job_deadline;
    done = shard.WaitAllFinished(until);
    const int64_t version = shard.MinVersion();
    if (stats_every > 0 && version >= next_stats) {
      out.Write({{"event", "server_stats"},
                 {"shard", options.shard.shard},
                 {"version", version},
                 {"min_version", version},
                 {"rss_bytes", RssBytes()},
                 {"state_bytes", shard.MemoryBytes()}});
      next_stats = (version / stats_every + 1) * stats_every;
    }
    if (done || !shard.aborted().ok() || absl::Now() >= job_deadline) break;
  }
  const absl::Status failure = shard.aborted();
  if (!failure.ok()) {
    // Keep answering for a while, so that every worker's heartbeat (every
    // failure_timeout/6) hears why the job failed.
    const absl::Duration grace =
        std::max(absl::Seconds(1), options.failure_timeout / 3);
    LOG(ERROR) << "parameter server shard " << options.shard.shard
               << ": job failed: " << failure.message() << "; exiting in "
               << absl::FormatDuration(grace);
    absl::SleepFor(grace);
  }
  (*server)->Shutdown(absl::Seconds(5));
  nlohmann::json final_record = {
      {"event", "server_final"},
      {"shard", options.shard.shard},
      {"version", shard.MinVersion()},
      {"state_bytes", shard.MemoryBytes()},
      {"peak_rss_bytes", PeakRssBytes()},
      {"rss_bytes", RssBytes()},
      {"resumed_at_step", shard.resume_step()},
      {"checkpoints_written", shard.checkpoints_written()},
      {"finished", done},
      {"summation", shard.summation_job()}};
  final_record["updates"] = CountsJson(shard.Counts());
  // The rate the workers registered (after their --lr_scaling) and its
  // warm-up, which this server applied.
  if (const std::optional<OptimizerConfig> o = shard.job_optimizer()) {
    final_record["optimizer"] = o->type;
    final_record["lr"] = o->lr;
    final_record["lr_warmup_steps"] = o->lr_warmup_steps;
  }
  if (!failure.ok()) final_record["job_failure"] = failure.message();
  out.Write(final_record);
  if (absl::Status c = shard.checkpoint_error(); !c.ok()) {
    LOG(ERROR) << "a checkpoint could not be written: " << c;
    return 1;
  }
  if (!failure.ok()) return 1;
  if (!done) {
    LOG(ERROR) << "workers did not all finish within --max_job_s="
               << absl::GetFlag(FLAGS_max_job_s) << "s";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Parameter server: ps_server --port=P --num_workers=N "
      "[--shard=i --num_shards=K]");
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  return ringside::Run();
}
