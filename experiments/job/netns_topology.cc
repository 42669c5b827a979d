#include "experiments/job/netns_topology.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace ringside {
namespace {

constexpr char kNamePrefix[] = "rsnet-";
constexpr char kNetnsDir[] = "/run/netns";
// Interface names: the bridge in the hub, each endpoint's end of its link.
constexpr char kBridge[] = "br0";
constexpr char kEndpointDevice[] = "eth0";
// htb quantum (bytes): one class per qdisc, so it only silences htb's
// "quantum is big" warning at high rates.
constexpr int64_t kHtbQuantum = 60000;
// The packets a veth hands htb (its gso_max_size, bytes): a quarter of a
// millisecond of line rate within these bounds. htb sends a packet whole
// whenever its bucket is not empty, so a packet is a burst of its own; a
// veth's default 64 KiB GSO packets let a 0.1 Gbit/s link pass 5 ms of
// line rate at once where a NIC serializes every byte (docs/RESULTS.md:
// zero3's small calls). Below 12 KiB the strategies lost throughput that
// the link's probe did not (8 KiB at 0.1 Gbit/s: every row 5-10% slower).
constexpr int64_t kMinPacket = 12 * 1024;
constexpr int64_t kMaxPacket = 64 * 1024;
// netem queue limit (packets); the default 1000 drops at high rate x delay.
constexpr int kNetemLimit = 100000;

// `name` on $PATH, then in the sbin folders (root's tools; Bazel's test
// environment may leave them off $PATH). Empty when not found.
std::string FindTool(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    dirs = absl::StrSplit(path, ':', absl::SkipEmpty());
  }
  for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    dirs.push_back(d);
  }
  for (const std::string& dir : dirs) {
    const std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// A namespace may make its default only a congestion control the host
// lists in net.ipv4.tcp_allowed_congestion_control (the kernel's rule for
// namespaces other than the first); FAILED_PRECONDITION naming the list and
// the fix otherwise. The host's own TCP and an unreadable list pass
// (sysctl then says).
absl::Status CheckCongestionPermitted(const NetworkShape& shape) {
  if (!shape.sets_tcp_congestion()) return absl::OkStatus();
  const std::string& name = shape.tcp_congestion;
  std::ifstream in("/proc/sys/net/ipv4/tcp_allowed_congestion_control");
  std::string line;
  if (!std::getline(in, line)) return absl::OkStatus();
  const std::vector<std::string> allowed =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("--link_tcp_congestion=", name,
                   ": this host lets network namespaces "
                   "choose only ",
                   line,
                   " (net.ipv4.tcp_allowed_congestion_control); "
                   "pick one of those, or as root: sysctl -w "
                   "net.ipv4.tcp_allowed_congestion_control='",
                   line, " ", name, "'"));
}

bool ValidEndpointName(const std::string& name) {
  if (name.empty() || name.size() > 8) return false;
  if (name == "hub" || name == "lo" || name == kBridge) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

bool ValidSubnet(const std::string& subnet) {
  std::vector<std::string> octets = absl::StrSplit(subnet, '.');
  if (octets.size() != 3) return false;
  for (const std::string& o : octets) {
    int v = 0;
    if (o.empty() || o.size() > 3 || !absl::SimpleAtoi(o, &v) || v < 0 ||
        v > 255) {
      return false;
    }
  }
  return true;
}

// `tool` followed by `parts`, each split at spaces (names and values have
// none: they are validated).
std::vector<std::string> Cmd(const std::string& tool,
                             std::initializer_list<absl::string_view> parts) {
  std::vector<std::string> argv = {tool};
  for (absl::string_view part : parts) {
    for (absl::string_view word :
         absl::StrSplit(part, ' ', absl::SkipEmpty())) {
      argv.emplace_back(word);
    }
  }
  return argv;
}

// The qdiscs on one egress: htb at the root, netem under it.
void AddShaping(const NetnsTopologyOptions& o, const std::string& ns,
                const std::string& dev, std::vector<NetnsCommand>& setup) {
  const int64_t rate_bit = std::llround(o.shape.link_gbit * 1e9);
  const int64_t ms_of_line = rate_bit / 8 / 1000;
  const int64_t packet = std::clamp(ms_of_line / 4, kMinPacket, kMaxPacket);
  // Half a millisecond of line rate, so that htb's timer does not cap the
  // rate below what was asked, and at least one packet.
  const int64_t burst = std::max(ms_of_line / 2, packet);
  const std::string rate = absl::StrCat(rate_bit, "bit");
  setup.push_back({Cmd(o.ip, {"-n", ns, "link set dev", dev, "gso_max_size",
                              absl::StrCat(packet)})});
  setup.push_back({Cmd(
      o.tc, {"-n", ns, "qdisc add dev", dev, "root handle 1: htb default 1"})});
  setup.push_back({Cmd(
      o.tc, {"-n", ns, "class add dev", dev, "parent 1: classid 1:1 htb rate",
             rate, "ceil", rate, "burst", absl::StrCat(burst), "cburst",
             absl::StrCat(burst), "quantum", absl::StrCat(kHtbQuantum)})});
  if (o.shape.link_latency_us > 0) {
    NetnsCommand netem;
    netem.argv = Cmd(
        o.tc, {"-n", ns, "qdisc add dev", dev, "parent 1:1 handle 10: netem",
               "delay", absl::StrCat(o.shape.link_latency_us / 2, "us"),
               "limit", absl::StrCat(kNetemLimit)});
    netem.latency = true;
    setup.push_back(std::move(netem));
  }
}

// A command's failure as one line.
std::string OneLine(absl::string_view message) {
  return absl::StrReplaceAll(message, {{"\n  ", " | "}, {"\n", " | "}});
}

// The pid in "rsnet-<pid>-...", or -1.
pid_t OwnerPid(const std::string& name) {
  if (!absl::StartsWith(name, kNamePrefix)) return -1;
  const std::string rest = name.substr(std::strlen(kNamePrefix));
  const size_t dash = rest.find('-');
  int pid = 0;
  if (dash == std::string::npos ||
      !absl::SimpleAtoi(rest.substr(0, dash), &pid) || pid <= 0) {
    return -1;
  }
  return pid;
}

// Starts `sh` in its own session, deaf to SIGINT/SIGTERM/SIGHUP, reading
// one line from a pipe: "done" means all is cleaned up; EOF without it (we
// died) makes it delete `namespaces`. Returns the write end (close-on-exec)
// and sets *pid; -1 on failure.
int SpawnGuardian(const std::string& ip,
                  const std::vector<std::string>& namespaces, pid_t* pid) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  static const char kScript[] =
      "trap '' INT TERM HUP\n"
      "read -r line\n"
      "[ \"$line\" = done ] && exit 0\n"
      "ip=$1; shift\n"
      "for ns do timeout 10 \"$ip\" netns del \"$ns\"; done\n";
  std::vector<std::string> args = {"/bin/sh", "-c", kScript, "rsnet-guardian",
                                   ip};
  // Endpoints first, hub last (the reverse of creation).
  args.insert(args.end(), namespaces.rbegin(), namespaces.rend());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  const int err =
      posix_spawn(pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
  if (err != 0) {
    close(fds[1]);
    return -1;
  }
  return fds[1];
}

}  // namespace

std::vector<std::string> DeleteNamespaceCommand(const std::string& ip,
                                                const std::string& name) {
  return {ip, "netns", "del", name};
}

absl::StatusOr<NetnsPlan> PlanNetns(const NetnsTopologyOptions& o) {
  if (absl::Status s = o.shape.Validate(); !s.ok()) return s;
  if (!o.shape.enabled()) {
    return absl::InvalidArgumentError("network shape is not enabled");
  }
  if (o.endpoints.empty() || o.endpoints.size() > 253) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a topology has 1..253 endpoints (one /24), got ", o.endpoints.size()));
  }
  std::set<std::string> seen;
  for (const std::string& e : o.endpoints) {
    if (!ValidEndpointName(e) || !seen.insert(e).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad or repeated endpoint name '", e,
                       "' (want 1-8 of [a-z0-9], unique, not hub/lo/br0)"));
    }
  }
  if (!ValidSubnet(o.subnet)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "subnet must be three octets like 10.77.0, got '", o.subnet, "'"));
  }
  const bool set_congestion = o.shape.sets_tcp_congestion();
  if (o.ip.empty() || o.tc.empty() || o.name_prefix.empty() ||
      (set_congestion && o.sysctl.empty())) {
    return absl::InvalidArgumentError(
        "ip, tc, name_prefix and (unless TCP is the host's) sysctl must be "
        "set");
  }
  for (char c : o.name_prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' &&
        c != '.') {
      return absl::InvalidArgumentError(absl::StrCat(
          "name_prefix '", o.name_prefix, "' may hold only [A-Za-z0-9_.-]"));
    }
  }

  NetnsPlan plan;
  const std::string hub = absl::StrCat(o.name_prefix, "-hub");
  plan.namespaces.push_back(hub);
  std::vector<NetnsCommand>& setup = plan.setup;
  setup.push_back({Cmd(o.ip, {"netns add", hub}), false, 0});
  setup.push_back({Cmd(o.ip, {"-n", hub, "link set dev lo up"})});
  setup.push_back({Cmd(o.ip, {"-n", hub, "link add", kBridge, "type bridge"})});
  setup.push_back({Cmd(o.ip, {"-n", hub, "link set dev", kBridge, "up"})});
  for (size_t i = 0; i < o.endpoints.size(); ++i) {
    const std::string& e = o.endpoints[i];
    const std::string ns = absl::StrCat(o.name_prefix, "-", e);
    const std::string address = absl::StrCat(o.subnet, ".", i + 2);
    plan.namespaces.push_back(ns);
    plan.addresses.push_back(address);
    const int created = static_cast<int>(plan.namespaces.size()) - 1;
    setup.push_back({Cmd(o.ip, {"netns add", ns}), false, created});
    setup.push_back({Cmd(o.ip, {"-n", ns, "link set dev lo up"})});
    if (set_congestion) {
      setup.push_back(
          {Cmd(o.ip, {"netns exec", ns, o.sysctl, "-q -w",
                      absl::StrCat("net.ipv4.tcp_congestion_control=",
                                   o.shape.tcp_congestion)})});
    }
    // Both ends are born in their namespaces: no name in ours to collide.
    setup.push_back({Cmd(o.ip, {"link add", kEndpointDevice, "netns", ns,
                                "type veth peer name", e, "netns", hub})});
    setup.push_back({Cmd(o.ip, {"-n", ns, "addr add", address + "/24", "dev",
                                kEndpointDevice})});
    setup.push_back(
        {Cmd(o.ip, {"-n", ns, "link set dev", kEndpointDevice, "up"})});
    setup.push_back(
        {Cmd(o.ip, {"-n", hub, "link set dev", e, "master", kBridge})});
    setup.push_back({Cmd(o.ip, {"-n", hub, "link set dev", e, "up"})});
    AddShaping(o, ns, kEndpointDevice, setup);  // its upload
    AddShaping(o, hub, e, setup);               // its download
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<NetnsTopology>> NetnsTopology::Create(
    NetnsTopologyOptions o) {
  if (absl::Status s = o.shape.Validate(); !s.ok()) return s;
  const bool real = !o.run;
  if (real) {
    if (geteuid() != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN); "
          "running as uid ",
          geteuid()));
    }
    for (auto [field, name, package] :
         {std::tuple<std::string*, const char*, const char*>{&o.ip, "ip",
                                                             "iproute2"},
          {&o.tc, "tc", "iproute2"},
          {&o.sysctl, "sysctl", "procps"}}) {
      if (field == &o.sysctl && !o.shape.sets_tcp_congestion()) continue;
      if (field->empty()) *field = FindTool(name);
      if (field->empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", name, "' (", package,
            ") not found on $PATH, /usr/sbin or /sbin (apt-get install ",
            package, ")"));
      }
    }
    if (absl::Status s = CheckCongestionPermitted(o.shape); !s.ok()) return s;
    const absl::Duration timeout = o.command_timeout;
    o.run = [timeout](const std::vector<std::string>& argv) {
      return RunBoundedCommand(argv, timeout);
    };
  } else {
    if (o.ip.empty()) o.ip = "ip";
    if (o.tc.empty()) o.tc = "tc";
    if (o.sysctl.empty()) o.sysctl = "sysctl";
  }
  if (o.name_prefix.empty()) {
    static std::atomic<int> seq{0};
    o.name_prefix = absl::StrCat(kNamePrefix, getpid(), "-", seq++);
  }
  absl::StatusOr<NetnsPlan> plan = PlanNetns(o);
  if (!plan.ok()) return plan.status();
  if (real) DeleteLeftoverNamespaces(o.ip, o.command_timeout);

  std::unique_ptr<NetnsTopology> t(
      new NetnsTopology(std::move(o), *std::move(plan)));
  t->created_.assign(t->plan_.namespaces.size(), false);
  if (real) {
    t->guardian_fd_ =
        SpawnGuardian(t->options_.ip, t->plan_.namespaces, &t->guardian_pid_);
    if (t->guardian_fd_ < 0) {
      return absl::InternalError(
          "cannot start the guardian process that deletes the namespaces if "
          "we die (posix_spawn /bin/sh)");
    }
  }
  for (const NetnsCommand& c : t->plan_.setup) {
    if (c.latency && !t->latency_unavailable_.empty()) continue;
    absl::Status s = t->options_.run(c.argv);
    if (!s.ok() && c.latency) {
      t->latency_unavailable_ =
          absl::StrContains(s.message(), "qdisc kind is unknown")
              ? "the kernel has no netem qdisc (CONFIG_NET_SCH_NETEM)"
              : absl::StrCat("netem failed: ", OneLine(s.message()));
      continue;
    }
    if (!s.ok()) {
      // `t` going out of scope deletes what was made.
      return absl::Status(s.code(), OneLine(s.message()));
    }
    if (c.creates >= 0) t->created_[c.creates] = true;
  }
  return t;
}

bool NetnsTopology::DeleteCreated() {
  bool all = true;
  // Endpoints first, the hub last.
  for (int i = static_cast<int>(created_.size()) - 1; i >= 0; --i) {
    if (!created_[i]) continue;
    absl::Status s =
        options_.run(DeleteNamespaceCommand(options_.ip, plan_.namespaces[i]));
    if (s.ok()) {
      created_[i] = false;
    } else {
      all = false;
      std::fprintf(stderr, "netns: cannot delete %s: %s\n",
                   plan_.namespaces[i].c_str(), OneLine(s.message()).c_str());
    }
  }
  return all;
}

NetnsTopology::~NetnsTopology() {
  const bool all = DeleteCreated();
  if (guardian_fd_ >= 0) {
    // "done" releases the guardian; without it (some delete failed) it
    // tries once more.
    if (all) (void)!write(guardian_fd_, "done\n", 5);
    close(guardian_fd_);
  }
  if (guardian_pid_ > 0) {
    const absl::Time until = absl::Now() + absl::Seconds(all ? 2 : 30);
    int status;
    while (waitpid(guardian_pid_, &status, WNOHANG) == 0 &&
           absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
}

std::vector<std::string> NetnsTopology::CommandPrefix(int endpoint) const {
  return {options_.ip, "netns", "exec", Namespace(endpoint)};
}

const std::string& NetnsTopology::Address(int endpoint) const {
  return plan_.addresses.at(endpoint);
}

const std::string& NetnsTopology::Namespace(int endpoint) const {
  return plan_.namespaces.at(endpoint + 1);
}

int DeleteLeftoverNamespaces(const std::string& ip, absl::Duration timeout) {
  std::error_code ec;
  std::filesystem::directory_iterator it(kNetnsDir, ec);
  if (ec) return 0;
  int deleted = 0;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    const pid_t pid = OwnerPid(name);
    if (pid <= 0 || pid == getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // owner alive
    if (RunBoundedCommand(DeleteNamespaceCommand(ip, name), timeout).ok()) {
      ++deleted;
    }
  }
  if (deleted > 0) {
    std::fprintf(stderr,
                 "netns: deleted %d namespaces left by dead processes\n",
                 deleted);
  }
  return deleted;
}

std::unique_ptr<JobNetwork> JobNetwork::Start(const NetworkShape& shape,
                                              const std::string& host,
                                              int num_servers,
                                              int num_workers) {
  return Start(shape, host, num_servers, num_workers, NetnsTopologyOptions());
}

std::unique_ptr<JobNetwork> JobNetwork::Start(const NetworkShape& shape,
                                              const std::string& host,
                                              int num_servers, int num_workers,
                                              bool servers_beside_rank0) {
  return Start(shape, host, num_servers, num_workers, NetnsTopologyOptions(),
               servers_beside_rank0);
}

std::unique_ptr<JobNetwork> JobNetwork::Start(const NetworkShape& shape,
                                              const std::string& host,
                                              int num_servers, int num_workers,
                                              NetnsTopologyOptions base,
                                              bool servers_beside_rank0) {
  std::unique_ptr<JobNetwork> net(new JobNetwork);
  net->host_ = host;
  net->servers_beside_rank0_ = servers_beside_rank0 && num_workers > 0;
  net->num_servers_ = net->servers_beside_rank0_ ? 0 : num_servers;
  if (!shape.enabled()) return net;
  base.shape = shape;
  base.endpoints.clear();
  for (int s = 0; s < net->num_servers_; ++s) {
    base.endpoints.push_back(absl::StrCat("s", s));
  }
  for (int w = 0; w < num_workers; ++w) {
    base.endpoints.push_back(absl::StrCat("w", w));
  }
  absl::StatusOr<std::unique_ptr<NetnsTopology>> topology =
      NetnsTopology::Create(std::move(base));
  if (topology.ok()) {
    net->topology_ = *std::move(topology);
  } else {
    net->fallback_reason_ = std::string(topology.status().message());
    if (net->fallback_reason_.empty()) {
      net->fallback_reason_ = topology.status().ToString();
    }
  }
  return net;
}

int JobNetwork::Endpoint(Role role, int index) const {
  if (role == kServer && servers_beside_rank0_) return 0;  // rank 0's
  return role == kServer ? index : num_servers_ + index;
}

std::string JobNetwork::Host(Role role, int index) const {
  return topology_ ? topology_->Address(Endpoint(role, index)) : host_;
}

void JobNetwork::Place(Role role, int index,
                       std::vector<std::string>& argv) const {
  if (!topology_) return;
  const int e = Endpoint(role, index);
  std::vector<std::string> prefix = topology_->CommandPrefix(e);
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  if (role == kWorker) {
    argv.push_back(absl::StrCat("--transport_host=", topology_->Address(e)));
  }
}

std::string JobNetwork::Describe() const {
  if (!fallback_reason_.empty()) {
    return absl::StrCat(
        "loopback (network shaping unavailable: ", fallback_reason_, ")");
  }
  if (!topology_) return "loopback";
  const NetworkShape& shape = topology_->shape();
  const std::string beside =
      servers_beside_rank0_ ? "; the servers in rank 0's namespace, behind "
                              "its link"
                            : "";
  if (topology_->latency_unavailable().empty()) {
    return absl::StrCat("netns: ", shape.Describe(), beside);
  }
  NetworkShape bandwidth_only = shape;
  bandwidth_only.link_latency_us = 0;
  return absl::StrCat("netns: ", bandwidth_only.Describe(), beside, "; the ",
                      shape.link_latency_us,
                      " us latency asked for is not emulated: ",
                      topology_->latency_unavailable());
}

std::vector<std::string> JobNetwork::Warnings() const {
  std::vector<std::string> warnings;
  if (!fallback_reason_.empty()) {
    warnings.push_back(absl::StrCat("network shaping unavailable: ",
                                    fallback_reason_, "; ran on loopback"));
  }
  if (topology_ && !topology_->latency_unavailable().empty()) {
    warnings.push_back(absl::StrCat(
        "latency emulation unavailable: ", topology_->latency_unavailable(),
        "; links shaped for bandwidth only (", topology_->shape().link_gbit,
        " Gbit/s), no added latency"));
  }
  return warnings;
}

}  // namespace ringside
