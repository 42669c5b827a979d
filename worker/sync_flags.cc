#include "worker/sync_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "collectives/gloo_loop_pacing.h"
#include "common/net_address.h"
#include "common/security_flags.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(std::string, servers, "",
          "Parameter servers host:port[,host:port...] in shard order.");
ABSL_FLAG(double, rpc_timeout_s, 120, "Deadline of each RPC or wait (s).");
ABSL_FLAG(double, connect_timeout_s, 30,
          "How long to wait for servers/peers at start-up (s).");
ABSL_FLAG(bool, overlap, true,
          "Communicate during backward where the strategy can (dps).");
ABSL_FLAG(std::string, transport_host, "127.0.0.1",
          "Address the collective transport binds and advertises (this "
          "host's reachable address in multi-host jobs).");
ABSL_FLAG(std::string, allreduce_algorithm, "ring",
          "CPU all-reduce algorithm: ring or halving_doubling.");
ABSL_FLAG(std::string, gloo_event_loop, "paced",
          "How Gloo's TCP event-loop thread is scheduled "
          "(collectives/gloo_loop_pacing.h): paced (the normal policy, its "
          "spin on a pair another thread holds braked), idle (SCHED_IDLE: "
          "never takes a core from a busy thread, but starves beside busy "
          "processes) or normal (as PyTorch runs Gloo).");
// Checkpoints (strategies that apply the optimizer on the workers; the
// parameter-server strategies checkpoint on the servers).
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Where rank 0 writes allreduce.ckpt (baseline/ring/fusion) and, "
          "with --resume, reads it.");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "Rank 0 checkpoints parameters, optimizer state and step every N "
          "steps (0: never); atomic and checksummed.");
ABSL_FLAG(bool, resume, false,
          "Continue from --checkpoint_dir's checkpoint (rank 0 loads and "
          "broadcasts it). PS strategies resume when their servers do.");

namespace ringside {

absl::StatusOr<SyncOptions> SyncOptionsFromFlags() {
  SyncOptions sync;
  const std::string servers = absl::GetFlag(FLAGS_servers);
  if (!servers.empty()) {
    absl::StatusOr<std::vector<HostPort>> list = ParseHostPortList(servers);
    if (!list.ok()) return list.status();
    sync.servers = *list;
  }
  sync.rpc_timeout = absl::Seconds(absl::GetFlag(FLAGS_rpc_timeout_s));
  sync.connect_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_connect_timeout_s));
  sync.overlap = absl::GetFlag(FLAGS_overlap);
  sync.transport_host = absl::GetFlag(FLAGS_transport_host);
  sync.allreduce_algorithm = absl::GetFlag(FLAGS_allreduce_algorithm);
  absl::StatusOr<GlooEventLoop> loop =
      ParseGlooEventLoop(absl::GetFlag(FLAGS_gloo_event_loop));
  if (!loop.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gloo_event_loop: ", loop.status().message()));
  }
  sync.gloo_event_loop = *loop;
  sync.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  sync.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  sync.resume = absl::GetFlag(FLAGS_resume);
  if (sync.checkpoint_every < 0 ||
      ((sync.checkpoint_every > 0 || sync.resume) &&
       sync.checkpoint_dir.empty())) {
    return absl::InvalidArgumentError(
        "--checkpoint_every must be >= 0, and it and --resume need "
        "--checkpoint_dir");
  }
  // Each linked strategy's own options, from the flags its options
  // library defines.
  if (absl::Status s = ReadOptionFlags(sync.strategy); !s.ok()) return s;
  absl::StatusOr<GrpcSecurity> security = SecurityFromFlags();
  if (!security.ok()) return security.status();
  sync.security = *std::move(security);
  if (absl::Status v = sync.Validate(); !v.ok()) return v;
  return sync;
}

}  // namespace ringside
