#include "common/blocking_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

void SetBlockingTimeouts(int fd, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

absl::Status SendAll(int fd, const char* data, int64_t n) {
  while (n > 0) {
    const ssize_t k = send(fd, data, static_cast<size_t>(n), MSG_NOSIGNAL);
    if (k <= 0) return Errno("send");
    data += k;
    n -= k;
  }
  return absl::OkStatus();
}

absl::Status RecvAll(int fd, char* data, int64_t n) {
  while (n > 0) {
    const ssize_t k = recv(fd, data, static_cast<size_t>(n), 0);
    if (k == 0) return absl::UnavailableError("peer closed");
    if (k < 0) return Errno("recv");
    data += k;
    n -= k;
  }
  return absl::OkStatus();
}

}  // namespace ringside
