// GrpcBulk: the bare-gRPC reference of transport_bench. It moves exactly the
// parameter server's per-step traffic over gRPC with nothing of the
// parameter server in between, so transport_bench can split the gap to a
// plain TCP stream into what gRPC itself costs (this against TcpEcho) and
// what the parameter-server logic adds (PsSession against this).
//
// Per round, each of N clients (one channel each, to one in-process server
// built with the parameter server's channel settings) runs, concurrently,
// an Upload stream of `bytes` in `chunk_bytes` chunks (the server copies
// each chunk once, as a shard sums it) and a Download stream of the same
// chunks (the client copies each once into place, as a pull does). Chunks
// are encoded as the parameter server's (common/chunk_wire.h), payload not
// copied. Blocking; every call has a deadline.
#ifndef RINGSIDE_EXPERIMENTS_COST_GRPC_BULK_H_
#define RINGSIDE_EXPERIMENTS_COST_GRPC_BULK_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringside {

struct GrpcBulkResult {
  double seconds = 0;       // wall time of the measured rounds
  int64_t bytes_moved = 0;  // both directions, all clients
};

// `warmup_rounds` + `rounds` rounds on `clients` concurrent clients; times
// the measured rounds. INVALID_ARGUMENT for counts < 1 (warm-up < 0).
absl::StatusOr<GrpcBulkResult> RunGrpcBulk(int clients, int64_t bytes,
                                           int64_t chunk_bytes, int rounds,
                                           int warmup_rounds,
                                           absl::Duration timeout);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_GRPC_BULK_H_
