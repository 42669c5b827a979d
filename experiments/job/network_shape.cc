#include "experiments/job/network_shape.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/emulation_scale_check.h"

namespace ringside {

const char kLinkTcpCongestionHelp[] =
    "Network shaping: the TCP congestion control inside the namespaces "
    "(reno, cubic, bbr, ...), or host: the host's default. reno: "
    "loss-based as Linux's default cubic, permitted in any namespace; "
    "others only where the host's net.ipv4.tcp_allowed_congestion_control "
    "lists them.";

absl::Status NetworkShape::Validate() const {
  if (!std::isfinite(link_gbit) || link_gbit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--link_gbit must be a number >= 0 (Gbit/s; 0 = no "
                     "shaping), got ",
                     link_gbit));
  }
  if (link_gbit > 0 && link_gbit < 1e-6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link_gbit must be at least 0.000001 (1 kbit/s), got ", link_gbit));
  }
  if (link_gbit > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link_gbit must be at most 1000 (Gbit/s), got ", link_gbit));
  }
  if (!std::isfinite(link_latency_us) || link_latency_us < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link_latency_us must be a number >= 0 (microseconds), got ",
        link_latency_us));
  }
  if (link_latency_us > 1e7) {
    return absl::InvalidArgumentError(
        absl::StrCat("--link_latency_us must be at most 10000000 (10 s), got ",
                     link_latency_us));
  }
  if (link_latency_us > 0 && link_gbit == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link_latency_us=", link_latency_us,
        " needs --link_gbit > 0 (shaping runs each process in its own "
        "network namespace)"));
  }
  if (absl::Status s = CheckEmulationScale(emulation_scale); !s.ok()) {
    return s;
  }
  if (emulation_scale > 1 && link_gbit == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--emulation_scale=", emulation_scale,
        " needs shaped links (--link_gbit > 0): it divides the links' "
        "bandwidth by the scale, and loopback's cannot be divided"));
  }
  if (tcp_congestion.empty() || tcp_congestion.size() > 16 ||
      !std::all_of(tcp_congestion.begin(), tcp_congestion.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--link_tcp_congestion must be a congestion control's name (1-16 of "
        "[a-z0-9_], e.g. reno, cubic, bbr) or host, got '",
        tcp_congestion, "'"));
  }
  return absl::OkStatus();
}

std::string NetworkShape::Describe() const {
  if (!enabled()) return "unshaped";
  return absl::StrCat(
      link_gbit, " Gbit/s links",
      emulation_scale > 1
          ? absl::StrCat(" (standing for ", represented_gbit(),
                         " Gbit/s at emulation scale ", emulation_scale, ")")
          : std::string(),
      ", ",
      link_latency_us > 0 ? absl::StrCat(link_latency_us, " us latency")
                          : std::string("no added latency"),
      sets_tcp_congestion() ? absl::StrCat(", TCP ", tcp_congestion)
                            : std::string(", TCP as the host's"));
}

}  // namespace ringside
