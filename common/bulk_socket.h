// Non-blocking TCP I/O under deadlines for the parameter server's bulk data
// path (common/bulk_wire.h): connect, read and write whole buffers, each
// bounded by an absl::Time deadline, so that no read or write waits past
// it. Errors name `what` (e.g. "parameter server 10.0.0.2:4000 (pull)"):
// DEADLINE_EXCEEDED when the deadline passes, UNAVAILABLE when the peer
// closed the connection or a call failed (naming errno). Thread-safe:
// each call touches only the descriptor given; Shutdown from another
// thread ends a blocked call on it with UNAVAILABLE.
#ifndef RINGSIDE_COMMON_BULK_SOCKET_H_
#define RINGSIDE_COMMON_BULK_SOCKET_H_

#include <sys/uio.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringside {

// A connected, non-blocking socket with TCP_NODELAY; the caller closes it.
absl::StatusOr<int> ConnectTcp(const std::string& host, int port,
                               absl::Time deadline, const std::string& what);

// Makes an accepted socket non-blocking with TCP_NODELAY.
void PrepareBulkSocket(int fd);

absl::Status ReadFull(int fd, char* data, int64_t n, absl::Time deadline,
                      const std::string& what);
// Writes every byte of `iov` (modified: advanced as bytes go).
absl::Status WriteFull(int fd, iovec* iov, int iovcnt, absl::Time deadline,
                       const std::string& what);
absl::Status WriteFull(int fd, const std::string& bytes, absl::Time deadline,
                       const std::string& what);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_BULK_SOCKET_H_
