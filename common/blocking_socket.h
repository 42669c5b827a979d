// Blocking TCP socket helpers for the plain-socket references and probes
// (experiments/cost/tcp_echo.h, experiments/job/link_probe.h): whole-buffer
// send and receive, and per-call timeouts. Thread-safe (they touch only
// the descriptor given).
#ifndef RINGSIDE_COMMON_BLOCKING_SOCKET_H_
#define RINGSIDE_COMMON_BLOCKING_SOCKET_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ringside {

// SO_RCVTIMEO and SO_SNDTIMEO of `timeout` (each blocking call, connect
// included, ends within it) and TCP_NODELAY.
void SetBlockingTimeouts(int fd, absl::Duration timeout);

// Sends all `n` bytes (MSG_NOSIGNAL); UNAVAILABLE naming errno when a call
// fails or times out.
absl::Status SendAll(int fd, const char* data, int64_t n);

// Receives exactly `n` bytes; UNAVAILABLE on a closed peer ("peer closed")
// or a failed or timed-out call.
absl::Status RecvAll(int fd, char* data, int64_t n);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_BLOCKING_SOCKET_H_
