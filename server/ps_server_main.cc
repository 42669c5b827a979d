// ps_server: one parameter server process (one shard of the key space).
//
//   ps_server --port=P --num_workers=N [--shard=i --num_shards=K]
//             [--auth_token_file=F] [--tls_cert=C --tls_key=K [--tls_ca=CA]]
//
// Prints {"event":"listening","port":P,"shard":i} on stdout once serving
// (with --port=0 the OS picks P), then serves until every worker has called
// Finish (exit 0) or --max_idle_s passes without all finishing (exit 1).
#include <glog/logging.h>
#include <grpcpp/grpcpp.h>
#include <malloc.h>

#include <cstdio>
#include <fstream>
#include <memory>
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
#include "common/security_flags.h"
#include "server/ps_server_runner.h"

ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on.");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 lets the OS pick one.");
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

namespace ringside {
namespace {

// Peak resident memory of this process (VmHWM), in bytes; 0 if unknown.
int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    int64_t kb = 0;
    if (absl::StartsWith(line, "VmHWM:") &&
        absl::SimpleAtoi(
            absl::StripAsciiWhitespace(absl::StripSuffix(line.substr(6), "kB")),
            &kb)) {
      return kb * 1024;
    }
  }
  return 0;
}

int Run() {
  // Chunk messages are MiB-sized; with glibc's default, growing mmap
  // threshold, freed ones stay cached in per-thread arenas and the
  // server's resident memory creeps up with the number of RPC threads.
  // A fixed threshold returns them to the OS.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  PsServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
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
  absl::StatusOr<std::unique_ptr<PsServer>> server = PsServer::Start(options);
  if (!server.ok()) {
    LOG(ERROR) << server.status();
    return absl::IsInvalidArgument(server.status()) ? 2 : 1;
  }
  ParamShard& shard = (*server)->shard();
  JsonLinesWriter out;
  out.Write({{"event", "listening"},
             {"port", (*server)->port()},
             {"shard", options.shard.shard},
             {"num_shards", options.shard.num_shards}});
  LOG(INFO) << "parameter server shard " << options.shard.shard << "/"
            << options.shard.num_shards << " listening on port "
            << (*server)->port() << " for " << options.shard.num_workers
            << " workers (" << options.security.Describe() << ")";

  const bool done = shard.WaitAllFinished(
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_max_job_s)));
  (*server)->Shutdown(absl::Seconds(5));
  out.Write({{"event", "server_final"},
             {"shard", options.shard.shard},
             {"version", shard.MinVersion()},
             {"state_bytes", shard.MemoryBytes()},
             {"peak_rss_bytes", PeakRssBytes()},
             {"resumed_at_step", shard.resume_step()},
             {"checkpoints_written", shard.checkpoints_written()},
             {"finished", done}});
  if (absl::Status c = shard.checkpoint_error(); !c.ok()) {
    LOG(ERROR) << "a checkpoint could not be written: " << c;
    return 1;
  }
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
