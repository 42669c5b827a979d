// PsOptions: how a worker of the parameter-server strategies (sps, dps,
// async_ps) talks to its servers. Its flags (--chunk_kb, --ps_transport)
// are defined once, in ps_options.cc, and read into SyncOptions::strategy
// by the worker.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_PS_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_PS_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct PsOptions {
  // Payload bytes per parameter-server message: a positive multiple of 4,
  // or 0 (default): AutoChunkBytes (core/ps_chunks.h).
  int64_t chunk_bytes = 0;
  // Partition function of the servers' key ranges (server/partitioner.h).
  std::string partitioner = "even_bytes";
  // How pushes and pulls travel: "grpc" (default; the ParameterServer
  // service's streams) or "tcp" (the servers' bulk data path,
  // server/bulk_server.h: ringside's framing on persistent connections;
  // registration, heartbeats and Finish stay on gRPC). "tcp" is refused
  // with TLS: the bulk path authenticates but does not encrypt.
  std::string transport = "grpc";

  absl::Status Validate() const;
};

// --chunk_kb, --ps_transport.
absl::StatusOr<PsOptions> PsOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_PS_OPTIONS_H_
