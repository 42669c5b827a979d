#include "common/process_memory.h"

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace ringside {
namespace {

// The "<field>: <n> kB" line of /proc/self/status, in bytes; 0 if absent.
int64_t StatusKilobytes(absl::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    int64_t kb = 0;
    if (absl::StartsWith(line, field) && line.size() > field.size() &&
        line[field.size()] == ':' &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(
                             line.substr(field.size() + 1), "kB")),
                         &kb)) {
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace

int64_t RssBytes() { return StatusKilobytes("VmRSS"); }
int64_t PeakRssBytes() { return StatusKilobytes("VmHWM"); }

}  // namespace ringside
