// Network shaping for local jobs: every process (server, worker) gets its
// own Linux network namespace, joined to one bridge by a veth link, on a
// private subnet (10.77.0.0/24), and every link is shaped with tc so that a
// job on one machine sees the bandwidth and latency of a cluster network.
//
//             hub namespace: bridge br0
//        ┌───────────┬─────────┴─┬───────────┐
//      veth s0      veth w0     veth w1  ...        (hub side: shaped egress
//        │           │           │                   = the host's download)
//    [ns s0]      [ns w0]     [ns w1]               (eth0 inside: shaped
//    10.77.0.2    10.77.0.3   10.77.0.4              egress = its upload)
//
// Each link carries `link_gbit` in each direction (full duplex, like a NIC
// into a switch): a parameter server with n workers receives n gradient
// copies through its one link, the bottleneck of a real cluster. The one-way
// latency between any two processes is `link_latency_us`, half of it added on
// each of the two shaped egresses on the way (so RTT = 2 x latency).
// Each shaped veth's packets (gso_max_size) hold a quarter of a
// millisecond of line rate, 12 to 64 KiB, so that htb, which sends a
// packet whole, bursts no more than a NIC would by much.
// Qdiscs: htb (rate, ceil, burst of half a millisecond of line rate, at
// least a packet) at the root and, when
// latency > 0, a netem delay leaf under it. Without netem in the kernel the
// links are shaped for bandwidth only and latency_unavailable() says why.
// Each endpoint namespace's TCP congestion control is set with sysctl
// (NetworkShape::tcp_congestion: reno unless asked otherwise).
//
// Processes run as `ip netns exec <namespace> <argv...>` (CommandPrefix);
// the names are unique per topology ("rsnet-<pid>-<seq>-<endpoint>"). The
// namespaces (and with them the veths and the bridge) are deleted by the
// destructor; a guardian process (`sh` in its own session, ignoring
// SIGINT/SIGTERM/SIGHUP) deletes them if this process dies without
// running the destructor (SIGKILL, crash, Ctrl-C); Create also deletes
// leftovers of dead processes ("rsnet-<pid>-..." whose pid is gone). Every
// ip/tc command is bounded by a timeout.
//
// Needs root (CAP_SYS_ADMIN + CAP_NET_ADMIN), iproute2 (`ip`, `tc`), veth,
// bridge and the htb qdisc; netem for latency.
//
// Thread-safety: NetnsTopology and JobNetwork are immutable after creation
// and safe to read from several threads; Create may run on several threads.
#ifndef RINGSIDE_EXPERIMENTS_JOB_NETNS_TOPOLOGY_H_
#define RINGSIDE_EXPERIMENTS_JOB_NETNS_TOPOLOGY_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/job/bounded_command.h"
#include "experiments/job/network_shape.h"

namespace ringside {

// Runs one ip/tc command (argv[0] a program), blocking; OK on exit code 0,
// otherwise an error with the command and its stderr.
using NetnsCommandRunner =
    std::function<absl::Status(const std::vector<std::string>& argv)>;

struct NetnsTopologyOptions {
  // The links. Must be enabled() and valid.
  NetworkShape shape;
  // One short name per process, e.g. {"s0", "w0", "w1"}: the namespace
  // suffix and the hub-side veth name. Unique, 1..8 of [a-z0-9], not "hub"
  // or "br0"; at most 253 (one /24). Endpoint i gets address
  // "<subnet>.<i + 2>" (.1 is left free).
  std::vector<std::string> endpoints;
  // First three octets of the private /24. Default "10.77.0". Every
  // topology has its own hub, so concurrent topologies may share it.
  std::string subnet = "10.77.0";
  // Namespace name prefix. Default (empty): "rsnet-<pid>-<seq>", unique in
  // this machine's PID namespace (what the leftover sweep relies on).
  std::string name_prefix;
  // Bound on each ip/tc command. Default 10 s.
  absl::Duration command_timeout = absl::Seconds(10);
  // The `ip`, `tc` and `sysctl` programs. Default: found on $PATH,
  // /usr/sbin, /sbin (sysctl only where shape.tcp_congestion is not "host").
  std::string ip;
  std::string tc;
  std::string sysctl;
  // Runs the setup and teardown commands. Default (empty): the real thing
  // (RunBoundedCommand), after checking that we are root. Tests inject a
  // fake; then no root check, no guardian and no leftover sweep.
  NetnsCommandRunner run;
};

// One setup command of a plan.
struct NetnsCommand {
  std::vector<std::string> argv;
  // Latency emulation (netem): when it fails, the links stay shaped for
  // bandwidth only and the remaining netem commands are skipped.
  bool latency = false;
  // Index into NetnsPlan::namespaces of the namespace this command creates
  // (`ip netns add`), or -1.
  int creates = -1;
};

// The commands of a topology, without running anything (so that they can be
// checked without privileges).
struct NetnsPlan {
  std::vector<std::string> namespaces;  // hub first, then one per endpoint
  std::vector<std::string> addresses;   // per endpoint, e.g. "10.77.0.2"
  std::vector<NetnsCommand> setup;      // in order
};

// Validates `options` (INVALID_ARGUMENT) and builds the plan. `ip`/`tc` and
// `name_prefix` must be set (Create fills the defaults).
absl::StatusOr<NetnsPlan> PlanNetns(const NetnsTopologyOptions& options);

// The teardown command of one namespace (`ip netns del <name>`).
std::vector<std::string> DeleteNamespaceCommand(const std::string& ip,
                                                const std::string& name);

class NetnsTopology {
 public:
  // Creates the namespaces, links and qdiscs. Blocking (a few dozen bounded
  // commands). On failure everything already made is deleted and the error
  // says what failed: FAILED_PRECONDITION when not permitted (not root, no
  // `ip`/`tc`), INVALID_ARGUMENT for bad options, else the failing command's
  // error with its stderr.
  static absl::StatusOr<std::unique_ptr<NetnsTopology>> Create(
      NetnsTopologyOptions options);

  // Deletes the namespaces (bounded; errors go to stderr) and releases the
  // guardian. Processes still inside keep their namespace until they exit.
  ~NetnsTopology();
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;

  int size() const { return static_cast<int>(plan_.addresses.size()); }
  // The prefix that runs a command in endpoint i's namespace:
  // {ip, "netns", "exec", name}.
  std::vector<std::string> CommandPrefix(int endpoint) const;
  // Endpoint i's address on the subnet, e.g. "10.77.0.3".
  const std::string& Address(int endpoint) const;
  // Endpoint i's namespace name (its file is /run/netns/<name>).
  const std::string& Namespace(int endpoint) const;
  // Every namespace of the topology, the hub first.
  const std::vector<std::string>& namespaces() const {
    return plan_.namespaces;
  }
  // Why latency > 0 is not emulated (netem failed), or empty.
  const std::string& latency_unavailable() const {
    return latency_unavailable_;
  }
  const NetworkShape& shape() const { return options_.shape; }

 private:
  NetnsTopology(NetnsTopologyOptions options, NetnsPlan plan)
      : options_(std::move(options)), plan_(std::move(plan)) {}
  // Deletes the namespaces marked created; true when all went.
  bool DeleteCreated();

  NetnsTopologyOptions options_;
  NetnsPlan plan_;
  std::vector<bool> created_;  // per plan_.namespaces
  std::string latency_unavailable_;
  pid_t guardian_pid_ = -1;
  int guardian_fd_ = -1;  // write end of the guardian's stdin
};

// Deletes namespaces "rsnet-<pid>-..." whose pid is not running (left by a
// process that died with its guardian). Returns how many it deleted.
int DeleteLeftoverNamespaces(const std::string& ip, absl::Duration timeout);

// How a local job's processes reach each other (the hook of local_job):
// on loopback (all in our namespace, every address `host`), or, when the
// shape is enabled, each in its own namespace of a NetnsTopology with
// servers "s<shard>" first and workers "w<rank>" after them; with
// `servers_beside_rank0` the servers have no namespace of their own and
// run in rank 0's (its address, its link: PyTorch DataParallel's layout,
// the master copy on GPU0), so rank 0 reaches them without crossing a link
// and every other worker's traffic crosses rank 0's.
class JobNetwork {
 public:
  enum Role { kServer, kWorker };

  // Sets up the job's network for a valid `shape`. Never fails: when
  // shaping is requested but the namespaces cannot be made, the job runs on
  // loopback and fallback_reason() says why. `base` passes the
  // NetnsTopologyOptions other than shape and endpoints (tests: a fake
  // runner). Blocking.
  static std::unique_ptr<JobNetwork> Start(const NetworkShape& shape,
                                           const std::string& host,
                                           int num_servers, int num_workers,
                                           NetnsTopologyOptions base,
                                           bool servers_beside_rank0 = false);
  // The same with the default options (no default argument: GCC 12 took
  // the default's string members for uninitialized in its callers).
  static std::unique_ptr<JobNetwork> Start(const NetworkShape& shape,
                                           const std::string& host,
                                           int num_servers, int num_workers);
  static std::unique_ptr<JobNetwork> Start(const NetworkShape& shape,
                                           const std::string& host,
                                           int num_servers, int num_workers,
                                           bool servers_beside_rank0);

  // The address the others use to reach this process (and the one a server
  // listens on, a worker's transport binds to).
  std::string Host(Role role, int index) const;
  // Puts a process into its namespace: prepends `ip netns exec <ns>` to its
  // argv and, for a worker, appends --transport_host=<its address> (so the
  // Gloo transport binds there). No-op on loopback.
  void Place(Role role, int index, std::vector<std::string>& argv) const;

  // True when the processes run in namespaces.
  bool shaped() const { return topology_ != nullptr; }
  // Why shaping was requested but could not be set up, or empty.
  const std::string& fallback_reason() const { return fallback_reason_; }
  // One line for logs and reports: "loopback", "netns: 1 Gbit/s links, 50 us
  // latency", "loopback (network shaping unavailable: <why>)"; when netem
  // failed "netns: 1 Gbit/s links, no added latency; the 50 us latency asked
  // for is not emulated: <why>".
  std::string Describe() const;
  // Warnings for the job's result: "network shaping unavailable: <why>; ran
  // on loopback" and/or "latency emulation unavailable: <why>; links shaped
  // for bandwidth only". Empty when all went as requested.
  std::vector<std::string> Warnings() const;

 private:
  JobNetwork() = default;
  int Endpoint(Role role, int index) const;

  std::string host_;
  int num_servers_ = 0;
  bool servers_beside_rank0_ = false;
  std::string fallback_reason_;
  std::unique_ptr<NetnsTopology> topology_;
};

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_NETNS_TOPOLOGY_H_
