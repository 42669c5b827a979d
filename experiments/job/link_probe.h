// ProbeShapedLink: what a shaped link (netns_topology.h) carries, measured
// through a topology of its own before the runs, for the cost model's B and
// α (experiments/cost/link_estimate.h).
//
// Two endpoints a and b get the shaped links a job's processes get (a's
// upload and b's download are shaped egresses, as between any two of the
// job's processes). The probe, inside this process (threads enter the
// namespaces with setns to make the sockets; the sockets keep them):
//   1. α: 4-byte ping-pongs between a and b (after warm-up ones); α is half
//      the mean round trip (the shaped latency, when netem emulates it, plus
//      both ends' stacks), as loopback's α is measured.
//   2. B: rounds in which a and b each send the other `round_seconds` of
//      line rate at once, on one TCP connection, as every strategy's
//      traffic runs both ways (push and pull, a ring's send and receive).
//      A round's goodput is the bytes one way over the slower direction's
//      time; B is the median over the measured rounds, after one warm-up
//      round. With data both ways, each direction's ACKs queue behind the
//      other's data, so B sits below the nominal rate (on a 0.1 Gbit/s link
//      by 6-20% here; docs/RESULTS.md).
//   3. The CPU a byte costs on its way: this process's CPU time (the
//      probe's threads and their system calls) and every core's interrupt
//      time (machine_cpu.h: the network stack's receive path, which the
//      kernel charges to no process) over B's rounds per byte moved, both
//      ways counted, and the same over the same rounds between two sockets
//      on this host's loopback (0.5 s of them); not the machine's whole
//      busy time, which counted whatever else ran (a build server right
//      after its build) as the link's. Their
//      difference is what the shaped path (veths, the bridge, htb) adds to
//      what loopback costs; the cost model charges it where the processes
//      share the cores (cost_model.h).
// Blocking; every socket call has `timeout`, so a probe ends within about
// (rounds + 1) × 2 × timeout plus 0.5 s of loopback rounds (each bounded
// so too, 65 at most). Needs what NetnsTopology needs (root,
// iproute2): FAILED_PRECONDITION when not permitted.
#ifndef RINGSIDE_EXPERIMENTS_JOB_LINK_PROBE_H_
#define RINGSIDE_EXPERIMENTS_JOB_LINK_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/job/netns_topology.h"

namespace ringside {

struct LinkProbeOptions {
  // Bytes each way per round: this many seconds of the nominal rate,
  // within [256 KiB, 256 MiB]. Must be in (0, 60].
  double round_seconds = 1.0;
  // Measured rounds (after one warm-up round). Must be in [1, 20].
  int rounds = 3;
  // Measured ping-pongs (after 10 warm-up ones). Must be in [1, 10000].
  int pings = 100;
  // Bound on each socket call. Must be positive.
  absl::Duration timeout = absl::Seconds(20);
};

struct LinkProbeResult {
  double goodput_Bps = 0;         // B: bytes/s each way, median round
  double latency_s = 0;           // α: half the mean ping round trip
  int64_t bytes_per_round = 0;    // each way
  std::vector<double> round_Bps;  // every measured round's goodput
  // CPU seconds per byte moved (3 above: the probe's own and the
  // interrupts'), through the shaped link and on loopback; 0 where
  // /proc/stat could not be read.
  double cpu_byte_s = 0;
  double loopback_cpu_byte_s = 0;
};

// INVALID_ARGUMENT for a shape that is not enabled() or valid, or options
// out of range; FAILED_PRECONDITION when namespaces cannot be made here;
// else the failing call's error.
absl::StatusOr<LinkProbeResult> ProbeShapedLink(
    const NetworkShape& shape, const LinkProbeOptions& options = {});

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_LINK_PROBE_H_
