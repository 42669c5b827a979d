// host:port parsing. Thread-safe (pure functions).
#ifndef RINGSIDE_COMMON_NET_ADDRESS_H_
#define RINGSIDE_COMMON_NET_ADDRESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

struct HostPort {
  std::string host;  // name, IPv4, or IPv6 without brackets
  int port = 0;      // 1..65535
  // "host:port", with brackets around an IPv6 host (gRPC target syntax).
  std::string ToString() const;
};

// Parses "host:port" or "[v6]:port". INVALID_ARGUMENT names the bad text.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

// Parses a comma-separated list; empty entries are errors. An empty list is
// an error too.
absl::StatusOr<std::vector<HostPort>> ParseHostPortList(absl::string_view text);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_NET_ADDRESS_H_
