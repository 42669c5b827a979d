// GrpcStore: a Store whose data lives in a StoreServer (normally rank 0's),
// reached over gRPC. The Store calls block like the in-memory ones: the
// server waits for missing keys, and the error names the store's address
// and the missing keys.
//
// Every RPC has a deadline: the operation's own timeout (Get/Wait) plus
// `rpc_timeout`. Every RPC also waits for the channel to be ready
// (wait_for_ready), so a server that restarts briefly is tolerated until
// that deadline.
//
// Thread-safe: distinct calls may run concurrently from any threads.
#ifndef RINGSIDE_COLLECTIVES_GRPC_STORE_H_
#define RINGSIDE_COLLECTIVES_GRPC_STORE_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectives/store.h"
#include "common/grpc_credentials.h"
#include "common/net_address.h"
#include "proto/store.grpc.pb.h"

namespace ringside {

struct GrpcStoreOptions {
  // How long Connect waits for the server to accept a connection (rank 0
  // may start after the others). Default 30 s.
  absl::Duration connect_timeout = absl::Seconds(30);
  // Slack added to every RPC's deadline beyond the operation's own timeout
  // (Set and Add have none), for the round trip and a busy server.
  // Default 10 s.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Token and TLS of the job (common/grpc_credentials.h); every call
  // carries the token. Default: insecure, no token.
  GrpcSecurity security;
};

class GrpcStore : public Store {
 public:
  // Creates the channel and blocks until the server at `server` accepts a
  // connection or `options.connect_timeout` passes: then DEADLINE_EXCEEDED
  // naming the address (and what to check about TLS). INVALID_ARGUMENT on
  // non-positive durations or invalid security options.
  static absl::StatusOr<std::unique_ptr<GrpcStore>> Connect(
      const HostPort& server, const GrpcStoreOptions& options = {});

  // "host:port" of the server.
  const std::string& address() const { return address_; }

  // All blocking; see Store. Get and Wait timeouts are capped at 7 days.
  absl::Status Set(absl::string_view key, absl::string_view value) override;
  absl::StatusOr<std::string> Get(absl::string_view key,
                                  absl::Duration timeout) override;
  absl::Status Wait(const std::vector<std::string>& keys,
                    absl::Duration timeout) override;
  absl::StatusOr<int64_t> Add(absl::string_view key, int64_t delta) override;

 private:
  GrpcStore(std::string address, const GrpcStoreOptions& options);
  // Prepares `context`: wait_for_ready and a deadline of `wait` +
  // rpc_timeout from now.
  void Prepare(grpc::ClientContext* context, absl::Duration wait) const;
  absl::Status FromGrpc(const grpc::Status& s, absl::string_view rpc) const;

  std::string address_;
  GrpcStoreOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Store::Stub> stub_;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GRPC_STORE_H_
