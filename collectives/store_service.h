// StoreService: the gRPC face of an InMemoryStore (proto/store.proto), and
// StoreServer: that service plus its grpc::Server, started on host:port
// (port 0 lets the OS pick). Rank 0 runs a StoreServer; every rank talks to
// it through a GrpcStore.
//
// Get and Wait block a server thread until the keys exist, the request's
// timeout_ms passes or the call's deadline comes (whichever is first), so
// the reply names the missing keys instead of a bare gRPC deadline.
//
// Every handler first checks the job's token (common/auth.h): a call
// without it or with another one fails UNAUTHENTICATED without touching the
// store.
//
// Thread-safe. StoreServer's destructor closes the store (waking blocked
// calls) and shuts the server down.
#ifndef RINGSIDE_COLLECTIVES_STORE_SERVICE_H_
#define RINGSIDE_COLLECTIVES_STORE_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/in_memory_store.h"
#include "common/grpc_credentials.h"
#include "proto/store.grpc.pb.h"

namespace ringside {

class StoreService final : public proto::Store::Service {
 public:
  // `store` is not owned and must outlive the service. `auth_token`: the
  // token every call must carry; empty: none checked.
  explicit StoreService(InMemoryStore* store, std::string auth_token = "")
      : store_(store), auth_token_(std::move(auth_token)) {}

  grpc::Status Set(grpc::ServerContext* context,
                   const proto::StoreSetRequest* request,
                   proto::StoreSetReply* reply) override;
  grpc::Status Get(grpc::ServerContext* context,
                   const proto::StoreGetRequest* request,
                   proto::StoreGetReply* reply) override;
  grpc::Status Wait(grpc::ServerContext* context,
                    const proto::StoreWaitRequest* request,
                    proto::StoreWaitReply* reply) override;
  grpc::Status Add(grpc::ServerContext* context,
                   const proto::StoreAddRequest* request,
                   proto::StoreAddReply* reply) override;

 private:
  InMemoryStore* store_;
  const std::string auth_token_;
};

struct StoreServerOptions {
  // Address to listen on (IPv4/IPv6 literal or name). Default "0.0.0.0":
  // every interface, so other hosts' ranks can reach rank 0.
  std::string host = "0.0.0.0";
  // Port; 0 lets the OS pick (read it back with port()). Default 0.
  int port = 0;
  // Token and TLS of the job (common/grpc_credentials.h). Default:
  // insecure, no token.
  GrpcSecurity security;
};

class StoreServer {
 public:
  // Binds and starts serving a fresh, empty store. INVALID_ARGUMENT on a
  // bad port or bad TLS material, UNAVAILABLE if the address cannot be
  // bound.
  static absl::StatusOr<std::unique_ptr<StoreServer>> Start(
      const StoreServerOptions& options);
  ~StoreServer();

  int port() const { return port_; }
  // The served store itself; rank 0 may use it directly (no RPC).
  InMemoryStore& store() { return store_; }
  // Closes the store (blocked Get/Wait fail with UNAVAILABLE) and stops the
  // server; in-flight calls get `grace` to finish. Blocking; idempotent.
  void Shutdown(absl::Duration grace);

 private:
  explicit StoreServer(std::string auth_token)
      : service_(&store_, std::move(auth_token)) {}
  int port_ = 0;
  InMemoryStore store_;
  StoreService service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_STORE_SERVICE_H_
