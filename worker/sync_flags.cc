#include "worker/sync_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "collectives/fusion/fusion_flags.h"
#include "collectives/gloo_loop_pacing.h"
#include "common/net_address.h"
#include "common/security_flags.h"

ABSL_FLAG(std::string, servers, "",
          "Parameter servers host:port[,host:port...] in shard order.");
ABSL_FLAG(int64_t, chunk_kb, 0,
          "Parameter-server chunk size (KiB); 0: about 16 chunks per server "
          "within [128 KiB, 1 MiB] (AutoChunkBytes, core/ps_chunks.h).");
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
ABSL_FLAG(int64_t, ring_bucket_kb, 25 * 1024,
          "ring: gradient bucket size (KiB), PyTorch DDP's default 25 MiB; "
          "each bucket of adjacent tensors is one in-place all-reduce. 0: "
          "one all-reduce per tensor.");
ABSL_FLAG(int64_t, ring_first_bucket_kb, 1024,
          "ring: size of the first bucket (KiB), small so that reduction "
          "starts early in backward (DDP: 1 MiB).");
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
ABSL_FLAG(int, staleness, 0,
          "async_ps: bounded staleness tau; a worker at step t may compute "
          "with parameters of version >= t - tau (0: as sps).");
ABSL_FLAG(int, local_size, 0,
          "hierarchical: ranks per host (ranks [h*L, (h+1)*L) share host h); "
          "0 reads LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE or "
          "SLURM_NTASKS_PER_NODE, else all ranks on one host.");

namespace ringside {

absl::StatusOr<SyncOptions> SyncOptionsFromFlags() {
  SyncOptions sync;
  const std::string servers = absl::GetFlag(FLAGS_servers);
  if (!servers.empty()) {
    absl::StatusOr<std::vector<HostPort>> list = ParseHostPortList(servers);
    if (!list.ok()) return list.status();
    sync.servers = *list;
  }
  sync.chunk_bytes = absl::GetFlag(FLAGS_chunk_kb) * 1024;
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
  sync.ring_bucket_bytes = absl::GetFlag(FLAGS_ring_bucket_kb) * 1024;
  sync.ring_first_bucket_bytes =
      absl::GetFlag(FLAGS_ring_first_bucket_kb) * 1024;
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
  sync.staleness = absl::GetFlag(FLAGS_staleness);
  sync.local_size = absl::GetFlag(FLAGS_local_size);
  absl::StatusOr<FusionOptions> fusion = FusionOptionsFromFlags();
  if (!fusion.ok()) return fusion.status();
  sync.fusion = *fusion;
  absl::StatusOr<GrpcSecurity> security = SecurityFromFlags();
  if (!security.ok()) return security.status();
  sync.security = *std::move(security);
  if (absl::Status v = sync.Validate(); !v.ok()) return v;
  return sync;
}

}  // namespace ringside
