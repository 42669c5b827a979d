#include "experiments/report/hardware.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringside {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of the first "key : value" line whose key is `key`.
std::string Field(absl::string_view text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) != key) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

int Cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 0;
}

std::vector<std::string> GpuNames() {
  std::vector<std::string> names;
  std::error_code ec;
  const std::filesystem::path dir = "/proc/driver/nvidia/gpus";
  if (std::filesystem::is_directory(dir, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string model =
          Field(ReadText((entry.path() / "information").string()), "Model");
      if (!model.empty()) names.push_back(model);
    }
  }
  if (!names.empty()) return names;
  FILE* pipe = popen(
      "timeout 10 nvidia-smi --query-gpu=name --format=csv,noheader "
      "2>/dev/null",
      "r");
  if (pipe == nullptr) return names;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    const std::string name(absl::StripAsciiWhitespace(line));
    if (!name.empty()) names.push_back(name);
  }
  pclose(pipe);
  return names;
}

}  // namespace

std::string CpuModelFromCpuinfo(absl::string_view cpuinfo) {
  for (const char* key : {"model name", "Hardware", "cpu model", "Processor"}) {
    std::string value = Field(cpuinfo, key);
    if (!value.empty()) return value;
  }
  return "unknown CPU";
}

double MemGibFromMeminfo(absl::string_view meminfo) {
  // "MemTotal:       24576000 kB"
  const std::string value = Field(meminfo, "MemTotal");
  std::vector<absl::string_view> parts =
      absl::StrSplit(value, ' ', absl::SkipWhitespace());
  double kb = 0;
  if (parts.empty() || !absl::SimpleAtod(parts[0], &kb)) return 0;
  return kb / (1024.0 * 1024.0);
}

double LoadAverageFromProc(absl::string_view loadavg) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(loadavg, ' ', absl::SkipWhitespace());
  double load = 0;
  if (parts.empty() || !absl::SimpleAtod(parts[0], &load)) return -1;
  return load;
}

double LoadAverage() { return LoadAverageFromProc(ReadText("/proc/loadavg")); }

Hardware ProbeHardware(const std::vector<std::string>& devices) {
  Hardware hw;
  hw.cores = Cores();
  hw.cpu_model = CpuModelFromCpuinfo(ReadText("/proc/cpuinfo"));
  hw.mem_gib = MemGibFromMeminfo(ReadText("/proc/meminfo"));
  hw.devices = devices;
  if (std::find(devices.begin(), devices.end(), "cuda") != devices.end()) {
    hw.gpus = GpuNames();
    if (hw.gpus.empty()) hw.gpus.push_back("unknown GPU");
  }
  return hw;
}

std::string HardwareLine(const Hardware& hw) {
  std::string line = absl::StrCat(hw.cores, " cores (nproc), ", hw.cpu_model);
  if (hw.mem_gib > 0) {
    absl::StrAppend(&line, absl::StrFormat(", %.1f GiB RAM", hw.mem_gib));
  }
  if (!hw.devices.empty()) {
    absl::StrAppend(&line, "; workers on ", absl::StrJoin(hw.devices, "+"));
  }
  if (!hw.gpus.empty()) {
    // "2x NVIDIA A100, 1x NVIDIA H100" in first-seen order.
    std::vector<std::pair<std::string, int>> counts;
    for (const std::string& g : hw.gpus) {
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& c) { return c.first == g; });
      if (it == counts.end()) {
        counts.push_back({g, 1});
      } else {
        ++it->second;
      }
    }
    std::vector<std::string> parts;
    for (const auto& [name, n] : counts) {
      parts.push_back(absl::StrCat(n, "x ", name));
    }
    absl::StrAppend(&line, ": ", absl::StrJoin(parts, ", "));
  }
  return line;
}

nlohmann::json HardwareJson(const Hardware& hw) {
  return {{"cores", hw.cores},     {"cpu_model", hw.cpu_model},
          {"mem_gib", hw.mem_gib}, {"devices", hw.devices},
          {"gpus", hw.gpus},       {"summary", HardwareLine(hw)}};
}

}  // namespace ringside
