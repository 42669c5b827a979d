// PsServer: one parameter-server shard served over gRPC — a ParamShard, its
// service and the grpc::Server — started on a host:port (port 0 lets the OS
// pick). Used by the ps_server binary, tests and benchmarks.
// Thread-safe; the destructor shuts the server down.
#ifndef RINGSIDE_SERVER_PS_SERVER_RUNNER_H_
#define RINGSIDE_SERVER_PS_SERVER_RUNNER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/grpc_credentials.h"
#include "common/liveness_monitor.h"
#include "server/bulk_server.h"
#include "server/param_shard.h"
#include "server/ps_service.h"

namespace ringside {

struct PsServerOptions {
  // Address to listen on (IPv4/IPv6 literal or name).
  std::string host = "0.0.0.0";
  // Port; 0 lets the OS pick (read it back with port()).
  int port = 0;
  // Largest gRPC message accepted or sent (MiB); > chunk size.
  int max_message_mb = 64;
  // Token and TLS of the job (common/grpc_credentials.h); the service checks
  // the token on every call. Default: insecure, no token.
  GrpcSecurity security;
  ParamShardOptions shard;
  PsServiceOptions service;
  // Continue from the shard's checkpoint in shard.checkpoint_dir (written
  // by an earlier run with checkpoint_every > 0). Start fails with the
  // reader's error when it is missing, corrupt or for another shard.
  bool resume = false;
  // Failure detection: a registered, unfinished worker silent (no heartbeat
  // and no other RPC) for longer than this fails the job — the shard is
  // aborted with UNAVAILABLE "worker rank R lost: no heartbeat for X s
  // (last seen at step S)". Default infinite: off (in-process servers of
  // tests and benchmarks); the ps_server binary sets its flag.
  absl::Duration failure_timeout = absl::InfiniteDuration();
  // The bulk data path (server/bulk_server.h) on this port of `host` (0:
  // the OS picks; -1: off). Not started when security.tls: the bulk path
  // does not encrypt.
  int bulk_port = 0;
};

// The parameter server's settings for bulk streams on `builder`: message
// size limits of `max_message_mb` and bounded HTTP/2 receive windows (why:
// in the .cc). Also used by benchmarks' bare-gRPC reference servers.
void AddBulkServerArguments(int max_message_mb, grpc::ServerBuilder* builder);

class PsServer {
 public:
  // Binds and starts serving. INVALID_ARGUMENT on bad options (bad TLS
  // material included), UNAVAILABLE if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<PsServer>> Start(
      const PsServerOptions& options);
  ~PsServer();

  int port() const { return port_; }
  // The bulk data path's port; 0 when it is not running.
  int bulk_port() const { return bulk_ == nullptr ? 0 : bulk_->port(); }
  // Handshakes and frames the bulk path refused (tests).
  int64_t bulk_refused() const {
    return bulk_ == nullptr ? 0 : bulk_->refused();
  }
  ParamShard& shard() { return *shard_; }
  // Why the job failed (a lost worker), or OK. Same as shard().aborted().
  absl::Status job_failure() const { return shard_->aborted(); }
  // Stops accepting calls; in-flight calls get `grace` to finish.
  void Shutdown(absl::Duration grace);

 private:
  PsServer() = default;
  int port_ = 0;
  std::unique_ptr<ParamShard> shard_;
  // Declared before the service that feeds its tracker, so it outlives it.
  std::unique_ptr<LivenessMonitor> liveness_;
  std::unique_ptr<BulkServer> bulk_;
  std::unique_ptr<ParameterServerService> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace ringside

#endif  // RINGSIDE_SERVER_PS_SERVER_RUNNER_H_
