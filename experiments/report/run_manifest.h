// Run manifest: what a report's numbers were measured with, so that two
// reports can be told apart or put side by side: the ringside commit (and
// whether the tree had changes), the command line, the kernel, the OS, the
// CPU's frequency governor and current frequency, and the versions of the
// Debian packages ringside builds against (Gloo, gRPC, protobuf, Abseil,
// Eigen).
//
// Thread-safety: the parsers and formatters are pure; ProbeRunManifest
// reads /proc, /sys and /etc and runs git and dpkg-query (a few hundred
// milliseconds), safe to call from several threads.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_RUN_MANIFEST_H_
#define RINGSIDE_EXPERIMENTS_REPORT_RUN_MANIFEST_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace ringside {

struct RunManifest {
  std::string commit;        // "60f71a8", "60f71a8+changes"; "unknown"
  std::string command;       // the command line, as given
  std::string kernel;        // uname: "Linux 6.1.0-18-amd64 x86_64"
  std::string os;            // /etc/os-release's PRETTY_NAME; "unknown"
  std::string governor;      // cpu0's scaling_governor; "none" without one
  double cpu_mhz = 0;        // the mean "cpu MHz" of /proc/cpuinfo; 0 unread
  // (Debian package, version) of the libraries ringside links; the
  // version "unknown" where dpkg-query does not answer.
  std::vector<std::pair<std::string, std::string>> libraries;
};

// The mean of the "cpu MHz" lines of /proc/cpuinfo text; 0 when none.
double MeanCpuMhz(absl::string_view cpuinfo);

// PRETTY_NAME of /etc/os-release text, unquoted; "unknown" when absent.
std::string PrettyOsName(absl::string_view os_release);

// Reads this machine's manifest; `argv` is the command line. The commit is
// read with git in $BUILD_WORKSPACE_DIRECTORY (set by `bazel run`) or else
// the current directory.
RunManifest ProbeRunManifest(const std::vector<std::string>& argv);

// One line: "commit 60f71a8; Linux 6.1.0 x86_64, Debian GNU/Linux 12
// (bookworm); CPU governor performance, 2450 MHz; libgloo-dev 0.0~git...,
// libgrpc++-dev 1.51.1-3, ...".
std::string RunManifestLine(const RunManifest& m);

// {"commit", "command", "kernel", "os", "cpu_governor", "cpu_mhz",
//  "libraries": {package: version}, "summary": RunManifestLine}.
nlohmann::json RunManifestJson(const RunManifest& m);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_RUN_MANIFEST_H_
