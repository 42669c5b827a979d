#include "common/bulk_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline,
                       const std::string& what, const char* doing) {
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, ": ", doing, " did not finish by its deadline"));
    }
    pollfd p{fd, events, 0};
    const int ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000));
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      return absl::UnavailableError(
          absl::StrCat(what, ": poll: ", std::strerror(errno)));
    }
    if (r > 0) return absl::OkStatus();
  }
}

}  // namespace

void PrepareBulkSocket(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const int buffer = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
}

absl::StatusOr<int> ConnectTcp(const std::string& host, int port,
                               absl::Time deadline, const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      e != 0) {
    return absl::UnavailableError(absl::StrCat(
        what, ": cannot resolve ", host, ": ", ::gai_strerror(e)));
  }
  absl::Status last = absl::UnavailableError(
      absl::StrCat(what, ": no address for ", host));
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    PrepareBulkSocket(fd);
    int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      last = WaitReady(fd, POLLOUT, deadline, what, "connecting");
      if (last.ok()) {
        int error = 0;
        socklen_t len = sizeof(error);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
        r = error == 0 ? 0 : -1;
        errno = error;
      }
    }
    if (r == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    if (last.ok()) {
      last = absl::UnavailableError(absl::StrCat(
          what, ": connecting to ", host, ":", port, ": ",
          std::strerror(errno)));
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return last;
}

absl::Status ReadFull(int fd, char* data, int64_t n, absl::Time deadline,
                      const std::string& what) {
  int64_t done = 0;
  while (done < n) {
    const ssize_t r = ::recv(fd, data + done, n - done, 0);
    if (r > 0) {
      done += r;
      continue;
    }
    if (r == 0) {
      return absl::UnavailableError(
          absl::StrCat(what, ": the peer closed the connection"));
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(
          absl::StrCat(what, ": recv: ", std::strerror(errno)));
    }
    if (absl::Status s = WaitReady(fd, POLLIN, deadline, what, "reading");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFull(int fd, iovec* iov, int iovcnt, absl::Time deadline,
                       const std::string& what) {
  while (iovcnt > 0) {
    if (iov->iov_len == 0) {
      ++iov;
      --iovcnt;
      continue;
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = std::min(iovcnt, 64);
    const ssize_t r = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        return absl::UnavailableError(
            absl::StrCat(what, ": send: ", std::strerror(errno)));
      }
      if (absl::Status s = WaitReady(fd, POLLOUT, deadline, what, "writing");
          !s.ok()) {
        return s;
      }
      continue;
    }
    size_t left = static_cast<size_t>(r);
    while (left > 0 && iovcnt > 0) {
      const size_t take = std::min(left, iov->iov_len);
      iov->iov_base = static_cast<char*>(iov->iov_base) + take;
      iov->iov_len -= take;
      left -= take;
      if (iov->iov_len == 0) {
        ++iov;
        --iovcnt;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFull(int fd, const std::string& bytes, absl::Time deadline,
                       const std::string& what) {
  iovec v{const_cast<char*>(bytes.data()), bytes.size()};
  return WriteFull(fd, &v, 1, deadline, what);
}

}  // namespace ringside
