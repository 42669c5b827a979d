#include "experiments/job/link_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/blocking_socket.h"
#include "common/machine_cpu.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

// The CPU the probe's rounds cost: this process's threads (the probe's
// sockets' system calls) and every core's interrupt time (the network
// stack's receive path through the veths, the bridge and htb, which the
// kernel's tick accounting charges to no process). Not the machine's whole
// busy time: whatever else runs (a build server, another job) would count
// as the link's.
absl::StatusOr<double> ProbeCpuSeconds() {
  absl::StatusOr<double> interrupts = MachineInterruptSeconds();
  if (!interrupts.ok()) return interrupts.status();
  return ProcessCpuSeconds() + *interrupts;
}

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// A TCP socket made in namespace `ns` (it stays there; the calling thread
// does not move: a helper thread enters the namespace and makes it).
absl::StatusOr<int> SocketIn(const std::string& ns) {
  absl::StatusOr<int> result = absl::InternalError("not run");
  std::thread maker([&] {
    const std::string path = "/run/netns/" + ns;
    const int nsfd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) {
      result = Errno("open " + path);
      return;
    }
    const int rc = setns(nsfd, CLONE_NEWNET);
    close(nsfd);
    if (rc != 0) {
      result = Errno("setns " + path);
      return;
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      result = Errno("socket in " + ns);
      return;
    }
    result = fd;
  });
  maker.join();
  return result;
}

// A connected pair: `a` connected to `listener`'s `address` and `b` what
// `listener` accepted. Takes both sockets; closes `listener`.
struct Pair {
  int a = -1;
  int b = -1;
};

absl::StatusOr<Pair> ConnectSockets(int listener, int a,
                                    const std::string& address,
                                    absl::Duration timeout) {
  absl::Cleanup close_listener = [listener] { close(listener); };
  absl::Cleanup close_a = [a] { close(a); };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Errno("bind/listen on " + address);
  }
  SetBlockingTimeouts(listener, timeout);
  SetBlockingTimeouts(a, timeout);  // SO_SNDTIMEO bounds the connect too
  if (connect(a, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Errno("connect to " + address);
  }
  const int b = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (b < 0) return Errno("accept");
  SetBlockingTimeouts(b, timeout);
  std::move(close_a).Cancel();
  return Pair{a, b};
}

// `a` made in endpoint 0's namespace, `b` in endpoint 1's.
absl::StatusOr<Pair> Connect(const NetnsTopology& topology,
                             absl::Duration timeout) {
  absl::StatusOr<int> listener = SocketIn(topology.Namespace(1));
  if (!listener.ok()) return listener.status();
  absl::StatusOr<int> a = SocketIn(topology.Namespace(0));
  if (!a.ok()) {
    close(*listener);
    return a.status();
  }
  return ConnectSockets(*listener, *a, topology.Address(1), timeout);
}

// Both ends on this process's loopback.
absl::StatusOr<Pair> ConnectLoopback(absl::Duration timeout) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Errno("socket");
  const int a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (a < 0) {
    absl::Status s = Errno("socket");
    close(listener);
    return s;
  }
  return ConnectSockets(listener, a, "127.0.0.1", timeout);
}

// `count` ping-pongs of 4 bytes (a sends, b echoes); each round trip's
// seconds.
absl::StatusOr<std::vector<double>> PingPong(const Pair& pair, int count) {
  absl::Status echo_status;
  std::thread echo([&] {
    char buf[4];
    for (int i = 0; i < count && echo_status.ok(); ++i) {
      echo_status = RecvAll(pair.b, buf, 4);
      if (echo_status.ok()) echo_status = SendAll(pair.b, buf, 4);
    }
  });
  std::vector<double> trips;
  absl::Status status;
  char buf[4] = {1, 2, 3, 4};
  for (int i = 0; i < count && status.ok(); ++i) {
    const double start = NowSeconds();
    status = SendAll(pair.a, buf, 4);
    if (status.ok()) status = RecvAll(pair.a, buf, 4);
    trips.push_back(NowSeconds() - start);
  }
  // On failure the echo thread's calls end at their timeout.
  if (!status.ok()) shutdown(pair.a, SHUT_RDWR);
  echo.join();
  if (!status.ok()) return status;
  if (!echo_status.ok()) return echo_status;
  return trips;
}

// One round: a and b each send `bytes` at once; the slower direction's
// seconds from the start to its last byte received.
absl::StatusOr<double> BothWays(const Pair& pair, int64_t bytes,
                                std::vector<char>& out_a,
                                std::vector<char>& out_b,
                                std::vector<char>& in_a,
                                std::vector<char>& in_b) {
  absl::Notification go;
  absl::Status status[4];
  double done[2] = {0, 0};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    go.WaitForNotification();
    status[0] = SendAll(pair.a, out_a.data(), bytes);
  });
  threads.emplace_back([&] {
    go.WaitForNotification();
    status[1] = SendAll(pair.b, out_b.data(), bytes);
  });
  threads.emplace_back([&] {
    go.WaitForNotification();
    status[2] = RecvAll(pair.b, in_b.data(), bytes);
    done[0] = NowSeconds();
  });
  threads.emplace_back([&] {
    go.WaitForNotification();
    status[3] = RecvAll(pair.a, in_a.data(), bytes);
    done[1] = NowSeconds();
  });
  const double start = NowSeconds();
  go.Notify();
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return std::max(done[0], done[1]) - start;
}

// The probe's CPU seconds per byte moved by `round` (a BothWays round
// of `bytes` each way) on this host's loopback: after a warm-up round,
// rounds until kLoopbackSeconds have passed (at least 2, at most 64), so
// that the ticks add up.
absl::StatusOr<double> LoopbackCpuByteSeconds(
    absl::FunctionRef<absl::StatusOr<double>(const Pair&)> round,
    int64_t bytes, absl::Duration timeout) {
  constexpr double kLoopbackSeconds = 0.5;
  absl::StatusOr<Pair> pair = ConnectLoopback(timeout);
  if (!pair.ok()) return pair.status();
  absl::Cleanup close_pair = [p = *pair] {
    close(p.a);
    close(p.b);
  };
  if (absl::StatusOr<double> warm = round(*pair); !warm.ok()) {
    return warm.status();
  }
  const absl::StatusOr<double> busy_start = ProbeCpuSeconds();
  if (!busy_start.ok()) return busy_start.status();
  const double wall_start = NowSeconds();
  int rounds = 0;
  while (rounds < 2 ||
         (rounds < 64 && NowSeconds() - wall_start < kLoopbackSeconds)) {
    if (absl::StatusOr<double> s = round(*pair); !s.ok()) return s.status();
    ++rounds;
  }
  const absl::StatusOr<double> busy_end = ProbeCpuSeconds();
  if (!busy_end.ok()) return busy_end.status();
  return (*busy_end - *busy_start) /
         (2.0 * static_cast<double>(bytes) * rounds);
}

absl::Status Check(const NetworkShape& shape, const LinkProbeOptions& o) {
  if (!shape.enabled()) {
    return absl::InvalidArgumentError(
        "a link probe needs a shaped link (--link_gbit > 0)");
  }
  if (absl::Status s = shape.Validate(); !s.ok()) return s;
  if (!(o.round_seconds > 0 && o.round_seconds <= 60)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link probe: round_seconds must be in (0, 60], got ", o.round_seconds));
  }
  if (o.rounds < 1 || o.rounds > 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("link probe: rounds must be in [1, 20], got ", o.rounds));
  }
  if (o.pings < 1 || o.pings > 10000) {
    return absl::InvalidArgumentError(
        absl::StrCat("link probe: pings must be in [1, 10000], got ", o.pings));
  }
  if (o.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("link probe: timeout must be positive");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LinkProbeResult> ProbeShapedLink(
    const NetworkShape& shape, const LinkProbeOptions& options) {
  if (absl::Status s = Check(shape, options); !s.ok()) return s;
  NetnsTopologyOptions topology_options;
  topology_options.shape = shape;
  topology_options.endpoints = {"pa", "pb"};
  absl::StatusOr<std::unique_ptr<NetnsTopology>> topology =
      NetnsTopology::Create(topology_options);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<Pair> pair = Connect(**topology, options.timeout);
  if (!pair.ok()) return pair.status();
  absl::Cleanup close_pair = [p = *pair] {
    close(p.a);
    close(p.b);
  };

  LinkProbeResult result;
  constexpr int kWarmupPings = 10;
  absl::StatusOr<std::vector<double>> trips =
      PingPong(*pair, kWarmupPings + options.pings);
  if (!trips.ok()) return trips.status();
  trips->erase(trips->begin(), trips->begin() + kWarmupPings);
  // The mean, as loopback's α (link_estimate.h): stalls count.
  double sum = 0;
  for (double t : *trips) sum += t;
  result.latency_s = sum / static_cast<double>(trips->size()) / 2;

  const double line_Bps = shape.link_gbit * 1e9 / 8;
  result.bytes_per_round = std::clamp<int64_t>(
      static_cast<int64_t>(line_Bps * options.round_seconds),
      int64_t{256} << 10, int64_t{256} << 20);
  const int64_t bytes = result.bytes_per_round;
  std::vector<char> out_a(bytes, 'a'), out_b(bytes, 'b'), in_a(bytes),
      in_b(bytes);
  auto round = [&](const Pair& p) {
    return BothWays(p, bytes, out_a, out_b, in_a, in_b);
  };
  absl::StatusOr<double> busy_start = absl::UnavailableError("not read");
  for (int r = 0; r <= options.rounds; ++r) {
    if (r == 1) busy_start = ProbeCpuSeconds();  // r 0: warm-up
    absl::StatusOr<double> seconds = round(*pair);
    if (!seconds.ok()) return seconds.status();
    if (r > 0) result.round_Bps.push_back(bytes / *seconds);
  }
  result.goodput_Bps = Median(result.round_Bps);
  const absl::StatusOr<double> busy_end = ProbeCpuSeconds();
  if (busy_start.ok() && busy_end.ok()) {
    result.cpu_byte_s = (*busy_end - *busy_start) /
                        (2.0 * static_cast<double>(bytes) * options.rounds);
  }

  // The same rounds on this host's loopback, for the CPU the shaped path
  // adds; without them (a loopback that fails) the figure stays 0 and B
  // and α stand.
  if (absl::StatusOr<double> loopback =
          LoopbackCpuByteSeconds(round, bytes, options.timeout);
      loopback.ok()) {
    result.loopback_cpu_byte_s = *loopback;
  }
  return result;
}

}  // namespace ringside
