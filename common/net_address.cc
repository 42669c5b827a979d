#include "common/net_address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ringside {

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad server address '", text, "': ", why, " (want host:port)"));
  };
  HostPort hp;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return bad("unterminated [ipv6]");
    }
    hp.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) return bad("no port");
    hp.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (hp.host.find(':') != std::string::npos) {
      return bad("IPv6 hosts need brackets");
    }
  }
  if (hp.host.empty()) return bad("empty host");
  if (!absl::SimpleAtoi(port_text, &hp.port) || hp.port < 1 ||
      hp.port > 65535) {
    return bad("port must be 1..65535");
  }
  return hp;
}

absl::StatusOr<std::vector<HostPort>> ParseHostPortList(
    absl::string_view text) {
  std::vector<HostPort> out;
  if (text.empty()) {
    return absl::InvalidArgumentError("empty server list (want host:port,...)");
  }
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    absl::StatusOr<HostPort> hp = ParseHostPort(part);
    if (!hp.ok()) return hp.status();
    out.push_back(*std::move(hp));
  }
  return out;
}

}  // namespace ringside
