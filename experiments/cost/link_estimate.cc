#include "experiments/cost/link_estimate.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "experiments/cost/tcp_echo.h"
#include "experiments/job/link_probe.h"
#include "experiments/job/netns_topology.h"

namespace ringside {

absl::StatusOr<LinkEstimate> EstimateLink(const LinkHints& hints,
                                          absl::Duration timeout) {
  LinkEstimate link;
  std::vector<std::string> sources;
  // The shaped link's probe, where it runs and something is not given.
  absl::StatusOr<LinkProbeResult> probe =
      absl::FailedPreconditionError("not probed");
  // Why a probe that ran failed, once, on the first nominal figure.
  std::string not_probed;
  if (hints.shaped.enabled() && hints.probe_shaped &&
      (hints.given_gbit <= 0 || hints.given_latency_us < 0)) {
    LinkProbeOptions options;
    options.timeout = timeout;
    probe = ProbeShapedLink(hints.shaped, options);
    if (!probe.ok()) {
      not_probed =
          absl::StrCat(" (not measured: ", probe.status().message(), ")");
    }
  }
  if (hints.given_gbit > 0) {
    link.bandwidth_Bps = hints.given_gbit * 1e9 / 8;
    sources.push_back("B given");
  } else if (probe.ok()) {
    link.bandwidth_Bps = probe->goodput_Bps;
    const auto [low, high] =
        std::minmax_element(probe->round_Bps.begin(), probe->round_Bps.end());
    sources.push_back(absl::StrFormat(
        "B measured through the shaped link, both ways at once: %.4g "
        "Gbit/s each way, %.0f%% of the nominal %g (median of %d rounds of "
        "%.1f MB, %.4g-%.4g)",
        probe->goodput_Bps * 8e-9,
        100 * probe->goodput_Bps * 8e-9 / hints.shaped.link_gbit,
        hints.shaped.link_gbit, static_cast<int>(probe->round_Bps.size()),
        probe->bytes_per_round / 1e6, *low * 8e-9, *high * 8e-9));
    if (probe->cpu_byte_s > 0 && probe->loopback_cpu_byte_s > 0) {
      link.cpu_byte_s =
          std::max(0.0, probe->cpu_byte_s - probe->loopback_cpu_byte_s);
      link.total_cpu_byte_s = probe->cpu_byte_s;
      sources.push_back(absl::StrFormat(
          "the machine's CPU per byte moved: %.2f ns through the shaped "
          "link, %.2f on loopback",
          probe->cpu_byte_s * 1e9, probe->loopback_cpu_byte_s * 1e9));
    }
  } else if (hints.shaped.enabled()) {
    link.bandwidth_Bps = hints.shaped.link_gbit * 1e9 / 8;
    sources.push_back(absl::StrCat("B the shaped link's nominal rate",
                                   std::exchange(not_probed, "")));
  } else {
    constexpr int64_t kBytes = int64_t{16} << 20;
    absl::StatusOr<TcpEchoResult> stream = RunTcpEcho(1, kBytes, 3, 1, timeout);
    if (!stream.ok()) {
      return Annotate(stream.status(), "measuring loopback bandwidth");
    }
    link.bandwidth_Bps = stream->bytes_moved / stream->seconds;
    sources.push_back("B measured on loopback (TCP stream)");
  }
  if (hints.given_latency_us >= 0) {
    link.latency_s = hints.given_latency_us * 1e-6;
    sources.push_back("α given");
  } else if (probe.ok()) {
    link.latency_s = probe->latency_s;
    sources.push_back(
        "α measured through the shaped link (4-byte round trip / 2)");
  } else {
    // The host's own stack, which a shaped link's messages cross too.
    constexpr int kRounds = 200;
    absl::StatusOr<TcpEchoResult> ping = RunTcpEcho(1, 4, kRounds, 20, timeout);
    if (!ping.ok()) return Annotate(ping.status(), "measuring loopback latency");
    link.latency_s = ping->seconds / kRounds / 2;
    if (hints.shaped.enabled()) {
      link.latency_s += hints.shaped.link_latency_us * 1e-6;
      sources.push_back(absl::StrCat(
          "α of the shaped link plus this host's stack (loopback 4-byte "
          "round trip / 2)",
          not_probed));
    } else {
      sources.push_back("α measured on loopback (4-byte round trip / 2)");
    }
  }
  link.source = absl::StrJoin(sources, "; ");
  return link;
}

}  // namespace ringside
