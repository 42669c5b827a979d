// The link every process of a local job gets, from the --link_gbit,
// --link_latency_us and --link_tcp_congestion flags: its values, their
// validation and a description for reports. NetnsTopology (netns_topology.h)
// makes the links.
#ifndef RINGSIDE_EXPERIMENTS_JOB_NETWORK_SHAPE_H_
#define RINGSIDE_EXPERIMENTS_JOB_NETWORK_SHAPE_H_

#include <string>

#include "absl/status/status.h"

namespace ringside {

// The link every process gets (the --link_gbit / --link_latency_us flags).
struct NetworkShape {
  // Bandwidth of each process's link, per direction, in Gbit/s (1e9 bit/s).
  // 0 (default): no shaping; the job runs on loopback as always. When > 0,
  // each process runs in its own namespace. Must be finite, 0 or in
  // (0, 1000].
  double link_gbit = 0;
  // One-way latency between any two processes, in microseconds. Default 0.
  // Must be finite and >= 0 (<= 10 s); > 0 needs link_gbit > 0.
  double link_latency_us = 0;
  // TCP congestion control inside the namespaces (each namespace's
  // net.ipv4.tcp_congestion_control), or "host": the host's default. The
  // default, reno, is loss-based as Linux's default cubic is, which acts as
  // reno at these links' millisecond round trips, and any namespace may
  // set it; cubic and others only where the host's
  // net.ipv4.tcp_allowed_congestion_control lists them. A host whose
  // default is bbr (as the 2-core VM's) paces each direction of a two-way
  // flow on its own estimate: on a 0.1 Gbit/s link the parameter-server
  // rows ran 9-26% slower than the probe's B predicted, against 0-5% with
  // reno or cubic (docs/RESULTS.md). 1-16 of [a-z0-9_].
  std::string tcp_congestion = "reno";
  // An emulated run at scale S (compare --emulation_scale): its tensors
  // hold 1/S of their bytes and link_gbit, the rate the links are shaped
  // at, is 1/S of the link the run stands for (represented_gbit), so
  // transfers take a full-size run's time. 1: no scaling. Must be finite
  // and >= 1; > 1 needs link_gbit > 0 (loopback's speed cannot be scaled).
  double emulation_scale = 1;

  // The link the run stands for: link_gbit · emulation_scale.
  double represented_gbit() const { return link_gbit * emulation_scale; }

  bool enabled() const { return link_gbit > 0; }
  // Whether the namespaces get tcp_congestion (not "host").
  bool sets_tcp_congestion() const { return tcp_congestion != "host"; }
  // INVALID_ARGUMENT naming the flag (--link_gbit / --link_latency_us).
  absl::Status Validate() const;
  // "1 Gbit/s links, 50 us latency, TCP reno", "10 Gbit/s links, no added
  // latency, TCP reno" ("TCP as the host's" for "host"); at an emulation
  // scale, "0.015625 Gbit/s links (standing for 1 Gbit/s at emulation scale
  // 64), ...".
  std::string Describe() const;
};

// The help of --link_tcp_congestion (compare, launch).
extern const char kLinkTcpCongestionHelp[];

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_NETWORK_SHAPE_H_
