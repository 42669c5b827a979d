#include "experiments/report/run_manifest.h"

#include <sys/utsname.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringside {
namespace {

// The libraries ringside links, by their Debian development package.
constexpr std::array<const char*, 5> kLibraryPackages = {
    "libgloo-dev", "libgrpc++-dev", "libprotobuf-dev", "libabsl-dev",
    "libeigen3-dev"};

std::string ReadText(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first line `command` prints (stderr discarded), trimmed; "" when it
// fails or prints nothing. `command` is one of this file's fixed commands.
std::string FirstLineOf(const std::string& command) {
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  std::array<char, 512> buffer{};
  std::string line;
  if (fgets(buffer.data(), buffer.size(), pipe) != nullptr) {
    line = buffer.data();
  }
  const int status = pclose(pipe);
  if (status != 0) return "";
  return std::string(absl::StripAsciiWhitespace(line));
}

// Single-quoted for the shell.
std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

double MeanCpuMhz(absl::string_view cpuinfo) {
  double sum = 0;
  int count = 0;
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    if (!absl::StartsWith(line, "cpu MHz")) continue;
    const size_t colon = line.find(':');
    double mhz = 0;
    if (colon != absl::string_view::npos &&
        absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(colon + 1)),
                         &mhz)) {
      sum += mhz;
      ++count;
    }
  }
  return count > 0 ? sum / count : 0;
}

std::string PrettyOsName(absl::string_view os_release) {
  for (absl::string_view line : absl::StrSplit(os_release, '\n')) {
    if (absl::ConsumePrefix(&line, "PRETTY_NAME=")) {
      line = absl::StripAsciiWhitespace(line);
      if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
        line = line.substr(1, line.size() - 2);
      }
      if (!line.empty()) return std::string(line);
    }
  }
  return "unknown";
}

RunManifest ProbeRunManifest(const std::vector<std::string>& argv) {
  RunManifest m;
  m.command = absl::StrJoin(argv, " ");
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string git =
      absl::StrCat("git -C ", Quoted(workspace != nullptr ? workspace : "."));
  m.commit = FirstLineOf(git + " rev-parse --short HEAD");
  if (m.commit.empty()) {
    m.commit = "unknown";
  } else if (!FirstLineOf(git + " status --porcelain --untracked-files=no")
                  .empty()) {
    absl::StrAppend(&m.commit, "+changes");
  }
  struct utsname u;
  m.kernel = uname(&u) == 0
                 ? absl::StrCat(u.sysname, " ", u.release, " ", u.machine)
                 : "unknown";
  m.os = PrettyOsName(ReadText("/etc/os-release"));
  m.governor = std::string(absl::StripAsciiWhitespace(
      ReadText("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")));
  if (m.governor.empty()) m.governor = "none";
  m.cpu_mhz = MeanCpuMhz(ReadText("/proc/cpuinfo"));
  for (const char* package : kLibraryPackages) {
    std::string version = FirstLineOf(
        absl::StrCat("dpkg-query -W -f='${Version}' ", package));
    m.libraries.emplace_back(package, version.empty() ? "unknown" : version);
  }
  return m;
}

std::string RunManifestLine(const RunManifest& m) {
  std::vector<std::string> libraries;
  for (const auto& [package, version] : m.libraries) {
    libraries.push_back(absl::StrCat(package, " ", version));
  }
  return absl::StrCat(
      "commit ", m.commit, "; ", m.kernel, ", ", m.os, "; CPU governor ",
      m.governor,
      m.cpu_mhz > 0 ? absl::StrFormat(", %.0f MHz", m.cpu_mhz) : "",
      libraries.empty() ? "" : "; ", absl::StrJoin(libraries, ", "));
}

nlohmann::json RunManifestJson(const RunManifest& m) {
  nlohmann::json libraries = nlohmann::json::object();
  for (const auto& [package, version] : m.libraries) {
    libraries[package] = version;
  }
  return {{"commit", m.commit},
          {"command", m.command},
          {"kernel", m.kernel},
          {"os", m.os},
          {"cpu_governor", m.governor},
          {"cpu_mhz", m.cpu_mhz > 0 ? nlohmann::json(m.cpu_mhz)
                                    : nlohmann::json()},
          {"libraries", libraries},
          {"summary", RunManifestLine(m)}};
}

}  // namespace ringside
