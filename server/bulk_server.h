// BulkServer: a parameter server's bulk data path (--ps_transport=tcp,
// common/bulk_wire.h): a TCP listener beside the gRPC service, serving one
// ParamShard's pushes and pulls over persistent connections in ringside's
// own framing. gRPC stays the control plane (registration, which tells a
// worker this port; heartbeats; finish).
//
// Each accepted connection runs on its own thread: the handshake (the
// peer proves it holds the job's token, and the server proves it back;
// a refused peer is answered and closed, and the server keeps serving),
// then a push connection's streams (chunks summed into the shard as they
// arrive, PushGradient's checks; the step's kPushEnd answered with
// kPushAck, or with kError carrying the first refusal's status code and
// message once the stream ends) or a pull connection's requests (chunks
// written straight from the shard's parameters as they become ready, then
// kPullEnd). Every read and write has a deadline: a frame's payload
// io_timeout, the wait for the next frame idle_timeout, a pull's wait for
// its chunks max_pull_wait. A frame the connection does not allow ends the
// connection after a kError naming it.
//
// Not with TLS: the bulk path is plaintext (its handshake authenticates,
// it does not encrypt), so PsServer does not start it when the job uses
// TLS and workers asking for it are refused (ps_session.cc).
// Thread-safe; the destructor (or Shutdown) closes the listener and every
// connection and joins their threads.
#ifndef RINGSIDE_SERVER_BULK_SERVER_H_
#define RINGSIDE_SERVER_BULK_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/bulk_wire.h"
#include "server/param_shard.h"

namespace ringside {

struct BulkServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: the OS picks (port())
  // This server's shard index (frames must name it).
  int shard = 0;
  // The job's token; empty: a job without one (the HMAC keyed with
  // nothing).
  std::string auth_token;
  absl::Duration io_timeout = absl::Seconds(60);
  absl::Duration idle_timeout = absl::Minutes(30);
  absl::Duration max_pull_wait = absl::Seconds(120);
  // Connections open at once beyond which new ones are closed at once.
  int max_connections = 1024;
};

class BulkServer {
 public:
  // `shard` must outlive the server; `seen(rank, step)` (may be empty)
  // learns of every worker's sign of life (step -1: none). UNAVAILABLE if
  // the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<BulkServer>> Start(
      ParamShard* shard, const BulkServerOptions& options,
      std::function<void(int rank, int64_t step)> seen = nullptr);
  ~BulkServer();

  int port() const { return port_; }
  // Handshakes and frames refused so far (tests).
  int64_t refused() const { return refused_.load(); }
  void Shutdown();

 private:
  BulkServer(ParamShard* shard, const BulkServerOptions& options,
             std::function<void(int, int64_t)> seen)
      : shard_(shard), options_(options), seen_(std::move(seen)) {}

  void AcceptLoop();
  void Serve(int fd);
  absl::StatusOr<BulkAuth> Handshake(int fd);
  absl::Status ServePush(int fd, const BulkAuth& auth);
  absl::Status ServePull(int fd, const BulkAuth& auth);
  BulkLimits Limits(const BulkAuth& auth) const;
  // A frame of this server's shard to `auth`'s rank.
  BulkHeader Frame(BulkKind kind, const BulkAuth& auth, int64_t step,
                   int64_t count) const;
  // Sends kError (best effort) naming `status`.
  void SendError(int fd, const BulkAuth& auth, const absl::Status& status);
  void Seen(int rank, int64_t step);

  ParamShard* shard_;
  const BulkServerOptions options_;
  std::function<void(int, int64_t)> seen_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> refused_{0};
  std::thread acceptor_;
  absl::Mutex mu_;
  std::set<int> open_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringside

#endif  // RINGSIDE_SERVER_BULK_SERVER_H_
