// TcpEcho: the plain-socket reference for transport benchmarks. N client
// connections to a loopback server; per round each client sends `bytes` and
// the server sends the same amount back (the push-then-pull pattern of a
// parameter server, with nothing but TCP in between). Blocking; every socket
// has a send/receive timeout.
#ifndef RINGSIDE_EXPERIMENTS_COST_TCP_ECHO_H_
#define RINGSIDE_EXPERIMENTS_COST_TCP_ECHO_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringside {

struct TcpEchoResult {
  double seconds = 0;       // wall time of the measured rounds
  int64_t bytes_moved = 0;  // both directions, all clients
};

// Runs `warmup_rounds` + `rounds` rounds on `clients` concurrent
// connections; times the measured rounds.
absl::StatusOr<TcpEchoResult> RunTcpEcho(int clients, int64_t bytes, int rounds,
                                         int warmup_rounds,
                                         absl::Duration timeout);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_TCP_ECHO_H_
