#include "experiments/cost/tcp_echo.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "common/blocking_socket.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<TcpEchoResult> RunTcpEcho(int clients, int64_t bytes, int rounds,
                                         int warmup_rounds,
                                         absl::Duration timeout) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, clients) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    absl::Status s = Errno("bind/listen");
    close(listener);
    return s;
  }
  SetBlockingTimeouts(listener, timeout);
  if (rounds < 1 || warmup_rounds < 0 || clients < 1 || bytes < 1) {
    close(listener);
    return absl::InvalidArgumentError("need rounds, clients, bytes >= 1");
  }
  const int total_rounds = rounds + warmup_rounds;
  std::vector<absl::Status> status(2 * clients);
  std::vector<std::thread> threads;
  absl::Barrier start_barrier(clients + 1), end_barrier(clients + 1);
  absl::Barrier* start = &start_barrier;
  absl::Barrier* end = &end_barrier;
  // Each client times its own measured rounds: the main thread may not be
  // scheduled when the barrier releases it (more threads than cores).
  std::vector<double> first_s(clients, 0.0), last_s(clients, 0.0);
  for (int c = 0; c < clients; ++c) {
    // Server side of connection c.
    threads.emplace_back([&, c] {
      int fd = accept(listener, nullptr, nullptr);
      if (fd < 0) {
        status[2 * c] = Errno("accept");
        return;
      }
      SetBlockingTimeouts(fd, timeout);
      std::vector<char> buf(bytes);
      for (int r = 0; r < total_rounds && status[2 * c].ok(); ++r) {
        status[2 * c] = RecvAll(fd, buf.data(), bytes);
        if (status[2 * c].ok()) status[2 * c] = SendAll(fd, buf.data(), bytes);
      }
      close(fd);
    });
    // Client c.
    threads.emplace_back([&, c] {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      SetBlockingTimeouts(fd, timeout);
      absl::Status& s = status[2 * c + 1];
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        s = Errno("connect");
      }
      std::vector<char> out(bytes, 1), in(bytes);
      for (int r = 0; r < total_rounds; ++r) {
        if (r == warmup_rounds) {
          start->Block();
          first_s[c] = NowSeconds();
        }
        if (!s.ok()) continue;
        s = SendAll(fd, out.data(), bytes);
        if (s.ok()) s = RecvAll(fd, in.data(), bytes);
      }
      last_s[c] = NowSeconds();
      end->Block();
      close(fd);
    });
  }
  start->Block();
  end->Block();
  for (std::thread& t : threads) t.join();
  TcpEchoResult result;
  result.seconds = *std::max_element(last_s.begin(), last_s.end()) -
                   *std::min_element(first_s.begin(), first_s.end());
  close(listener);
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  result.bytes_moved = 2 * bytes * rounds * clients;
  return result;
}

}  // namespace ringside
