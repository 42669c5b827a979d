// Worker liveness: the heartbeat sources a worker beats through, and the
// monitor set-up of the worker binary (common/liveness_monitor.h has the
// detection loop).
//
// Store heartbeats (strategies with the job's store: ring, fusion): every
// beat sets "liveness/<rank>" = "<counter> <step>" in the store and reads
// every other rank's key. A rank is tracked as "rank R" from its first
// heartbeat, or from the first beat after step 0 (all ranks joined the
// collective by then); once its counter stops advancing for the failure
// timeout it is lost; "done <step>" means it finished cleanly. On ranks > 0 the store
// itself (served by rank 0) is a peer too, "rank 0's store (host:port)",
// tracked from the start; while it cannot be reached only its own silence
// counts (the other ranks cannot be observed).
//
// Server heartbeats (parameter-server strategies: sps, dps): every beat
// sends Heartbeat(rank, step) to every server with a deadline of one
// period. A server is tracked as "parameter server shard K (host:port)"
// from its first reply, or from the first beat after step 0; a reply
// carrying the server's job_failure (e.g. a lost worker) is a verdict at
// once.
//
// The monitor a worker starts passes its verdict to the log and, unless
// the process exits by itself within `exit_after_verdict`, ends it with
// _exit(1): a training thread stuck in a Gloo collective cannot be
// interrupted, and one blocked in an RPC would otherwise wait for its
// deadline.
#ifndef RINGSIDE_WORKER_WORKER_LIVENESS_H_
#define RINGSIDE_WORKER_WORKER_LIVENESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/store.h"
#include "common/grpc_credentials.h"
#include "common/liveness_monitor.h"
#include "common/net_address.h"

namespace ringside {

// The key rank `rank` heartbeats under in the job's store.
std::string StoreHeartbeatKey(int rank);

// Heartbeats through `store` (not owned; must outlive the source, or pass
// ownership with `owned`). `store_name` names it in verdicts; ranks > 0
// track it as a peer.
std::unique_ptr<HeartbeatSource> MakeStoreHeartbeats(
    Store* store, std::unique_ptr<Store> owned, int rank, int world_size,
    std::string store_name);

// Heartbeats to every parameter server (in shard order), each RPC bounded
// by `rpc_deadline`, with the job's `security`.
std::unique_ptr<HeartbeatSource> MakeServerHeartbeats(
    const std::vector<HostPort>& servers, int rank,
    absl::Duration rpc_deadline, const GrpcSecurity& security = {});

struct WorkerLivenessOptions {
  int rank = 0;
  int world_size = 1;
  // A peer silent for longer than this is lost; > 0. Heartbeats go out
  // every failure_timeout / 6.
  absl::Duration failure_timeout = absl::Seconds(30);
  // After a verdict the process has this long to exit by itself before
  // the monitor ends it with _exit(1).
  absl::Duration exit_after_verdict = absl::Seconds(1);
  // Store heartbeats: rank 0 passes its own (in-process) store here; ranks
  // > 0 leave it null and give `master`, to which the monitor opens its own
  // connection (so that heartbeats have short deadlines).
  Store* local_store = nullptr;
  HostPort master;
  bool use_store = false;
  // Server heartbeats: the job's parameter servers (when not use_store).
  std::vector<HostPort> servers;
  // Token and TLS of the job's RPCs (to the store and the servers).
  GrpcSecurity security;
};

// Starts the monitor of a worker; null when there is nobody to watch (one
// worker and no server). Blocking while connecting to the store (bounded
// by failure_timeout). INVALID_ARGUMENT on bad options.
absl::StatusOr<std::unique_ptr<LivenessMonitor>> StartWorkerLiveness(
    const WorkerLivenessOptions& options);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_WORKER_LIVENESS_H_
