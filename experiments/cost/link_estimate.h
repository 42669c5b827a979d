// LinkEstimate: the link bandwidth B and latency α that compare's cost-model
// report (prediction_report.h) predicts with. For each of the two, in order:
//   1. the value given on the command line (--model_bandwidth_gbit > 0,
//      --model_latency_us >= 0);
//   2. the shaped link when runs use network namespaces (--link_gbit > 0):
//      measured through a shaped topology of its own (job/link_probe.h):
//      B the goodput each way with data both ways at once, α half a 4-byte
//      round trip. Where the probe cannot run (no namespaces here) or is
//      switched off: B the nominal rate, α its --link_latency_us plus the
//      host's own stack, measured as in 3; the source says which and why;
//   3. measured on loopback before the runs with a plain TCP stream
//      (tcp_echo.h): B from a 16 MiB message echoed back (bytes moved /
//      seconds), α as half the round trip of a 4-byte message.
// Blocking (well under a second on loopback; about 5 s for a shaped link's
// probe), every socket call bounded by `timeout`.
#ifndef RINGSIDE_EXPERIMENTS_COST_LINK_ESTIMATE_H_
#define RINGSIDE_EXPERIMENTS_COST_LINK_ESTIMATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/job/netns_topology.h"

namespace ringside {

struct LinkEstimate {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  // A shaped link's probe: the busy CPU per byte moved through it beyond a
  // byte on loopback (LinkProbeResult's cpu_byte_s − loopback_cpu_byte_s,
  // at least 0); 0 where no probe ran.
  double cpu_byte_s = 0;
  // The same in all, a byte on loopback's included (LinkProbeResult's
  // cpu_byte_s); 0 where no probe ran.
  double total_cpu_byte_s = 0;
  std::string source;  // e.g. "measured on loopback (TCP stream)"
};

struct LinkHints {
  double given_gbit = 0;          // > 0: use it
  double given_latency_us = -1;   // >= 0: use it
  // The runs' network: enabled() when they are on a shaped link (its
  // rate, added latency and TCP).
  NetworkShape shaped;
  // Measure a shaped link (2 above); false: take it as given (tests).
  bool probe_shaped = true;
};

absl::StatusOr<LinkEstimate> EstimateLink(const LinkHints& hints,
                                          absl::Duration timeout);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COST_LINK_ESTIMATE_H_
