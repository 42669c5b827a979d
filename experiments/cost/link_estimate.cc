#include "experiments/cost/link_estimate.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "experiments/cost/tcp_echo.h"

namespace ringside {

absl::StatusOr<LinkEstimate> EstimateLink(const LinkHints& hints,
                                          absl::Duration timeout) {
  LinkEstimate link;
  std::vector<std::string> sources;
  if (hints.given_gbit > 0) {
    link.bandwidth_Bps = hints.given_gbit * 1e9 / 8;
    sources.push_back("B given");
  } else if (hints.shaped_gbit > 0) {
    link.bandwidth_Bps = hints.shaped_gbit * 1e9 / 8;
    sources.push_back("B of the shaped link");
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
  } else {
    // The host's own stack, which a shaped link's messages cross too.
    constexpr int kRounds = 200;
    absl::StatusOr<TcpEchoResult> ping = RunTcpEcho(1, 4, kRounds, 20, timeout);
    if (!ping.ok()) return Annotate(ping.status(), "measuring loopback latency");
    link.latency_s = ping->seconds / kRounds / 2;
    if (hints.shaped_gbit > 0) {
      link.latency_s += hints.shaped_latency_us * 1e-6;
      sources.push_back(
          "α of the shaped link plus this host's stack (loopback 4-byte "
          "round trip / 2)");
    } else {
      sources.push_back("α measured on loopback (4-byte round trip / 2)");
    }
  }
  link.source = absl::StrJoin(sources, "; ");
  return link;
}

}  // namespace ringside
