#include "collectives/rendezvous.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ringside {

absl::Status RendezvousOptions::Validate(int rank) const {
  if (master_port < 0 || master_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("master port must be 0..65535, got ", master_port));
  }
  if (rank > 0 && master_port == 0) {
    return absl::InvalidArgumentError(
        "rank > 0 needs rank 0's store port (--master_port or MASTER_PORT)");
  }
  if (master_addr.empty()) {
    return absl::InvalidArgumentError(
        "empty master address (--master_addr or MASTER_ADDR)");
  }
  if (connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("connect_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<RendezvousOptions> RendezvousFromEnv(std::string master_addr,
                                                    int master_port) {
  RendezvousOptions options;
  if (master_addr.empty()) {
    const char* env = std::getenv("MASTER_ADDR");
    master_addr = env != nullptr ? env : options.master_addr;
  }
  if (master_port < 0) {
    const char* env = std::getenv("MASTER_PORT");
    if (env == nullptr) {
      master_port = options.master_port;
    } else if (!absl::SimpleAtoi(env, &master_port)) {
      return absl::InvalidArgumentError(
          absl::StrCat("MASTER_PORT='", env, "' is not an integer"));
    }
  }
  options.master_addr = master_addr;
  options.master_port = master_port;
  return options;
}

absl::StatusOr<std::unique_ptr<JobRendezvous>> JobRendezvous::Join(
    int rank, int world_size, const RendezvousOptions& options) {
  RS_RETURN_IF_ERROR(options.Validate(rank));
  if (rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " outside [0, ", world_size, ")"));
  }
  std::unique_ptr<JobRendezvous> r(new JobRendezvous);
  if (rank == 0) {
    StoreServerOptions server;
    server.host = options.listen_host;
    server.port = options.master_port;
    server.security = options.security;
    RS_ASSIGN_OR_RETURN(r->server_, StoreServer::Start(server));
    r->store_ = &r->server_->store();
    r->port_ = r->server_->port();
  } else {
    GrpcStoreOptions client;
    client.connect_timeout = options.connect_timeout;
    client.security = options.security;
    RS_ASSIGN_OR_RETURN(
        r->client_,
        GrpcStore::Connect({options.master_addr, options.master_port}, client));
    r->store_ = r->client_.get();
    r->port_ = options.master_port;
  }
  return r;
}

JobRendezvous::~JobRendezvous() {
  client_.reset();
  if (server_ != nullptr) server_->Shutdown(absl::Seconds(2));
}

}  // namespace ringside
