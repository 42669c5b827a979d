// JobRendezvous: the job-wide Store every rank joins at start-up, in the
// torchrun MASTER_ADDR:MASTER_PORT picture. Rank 0 serves the store over
// gRPC on master_port (0 lets the OS pick; read it back with port()); the
// other ranks connect to master_addr:master_port, waiting up to
// connect_timeout for rank 0 to come up. Strategies use the store for Gloo
// rendezvous, the NCCL unique id and barriers.
// Thread-safe (the Store is); rank 0's store lives as long as this object.
#ifndef RINGSIDE_COLLECTIVES_RENDEZVOUS_H_
#define RINGSIDE_COLLECTIVES_RENDEZVOUS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/grpc_store.h"
#include "collectives/store.h"
#include "collectives/store_service.h"

namespace ringside {

struct RendezvousOptions {
  // Host of rank 0's store (MASTER_ADDR). Default "127.0.0.1".
  std::string master_addr = "127.0.0.1";
  // Port of rank 0's store (MASTER_PORT); rank 0 may pass 0 to let the OS
  // pick. Default 29500, torchrun's.
  int master_port = 29500;
  // Address rank 0's store listens on. Default "0.0.0.0" (all interfaces).
  std::string listen_host = "0.0.0.0";
  // How long ranks > 0 wait for rank 0's store. Default 30 s.
  absl::Duration connect_timeout = absl::Seconds(30);
  // Token and TLS of the job: rank 0's store serves with them, the others
  // connect with them (common/grpc_credentials.h). Default: insecure, no
  // token.
  GrpcSecurity security;

  absl::Status Validate(int rank) const;
};

// Fills master_addr/master_port from MASTER_ADDR/MASTER_PORT when those are
// set and the given values are still the defaults ("" / -1).
absl::StatusOr<RendezvousOptions> RendezvousFromEnv(std::string master_addr,
                                                    int master_port);

class JobRendezvous {
 public:
  // Blocking: rank 0 binds, others connect (bounded by connect_timeout).
  static absl::StatusOr<std::unique_ptr<JobRendezvous>> Join(
      int rank, int world_size, const RendezvousOptions& options);
  ~JobRendezvous();

  Store& store() { return *store_; }
  // The store's port: the bound one on rank 0.
  int port() const { return port_; }

 private:
  JobRendezvous() = default;
  std::unique_ptr<StoreServer> server_;  // rank 0 only
  std::unique_ptr<GrpcStore> client_;    // ranks > 0
  Store* store_ = nullptr;
  int port_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_RENDEZVOUS_H_
