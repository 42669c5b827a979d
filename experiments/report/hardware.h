// Hardware description for reports: how many cores this process may use
// (what `nproc` says), the CPU model from /proc/cpuinfo, the memory, and the
// GPUs when workers ran on CUDA, so every output says where it was measured.
//
// Thread-safety: the parsers and formatters are pure; ProbeHardware reads
// /proc and may run nvidia-smi, and is safe to call from several threads.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_HARDWARE_H_
#define RINGSIDE_EXPERIMENTS_REPORT_HARDWARE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ringside {

struct Hardware {
  int cores = 0;          // CPUs this process may run on (nproc)
  std::string cpu_model;  // e.g. "AMD EPYC 7B13"; "unknown CPU" if unread
  double mem_gib = 0;     // MemTotal in GiB; 0 if unread
  // Devices the workers computed on, as their final records say
  // ("cpu", "cuda"); empty = not known.
  std::vector<std::string> devices;
  // GPU names (one entry per GPU) when a device is "cuda"; empty otherwise.
  std::vector<std::string> gpus;
};

// The CPU model in /proc/cpuinfo text: the first "model name" value, else
// "Hardware", "cpu model" or "Processor" (ARM, MIPS); "unknown CPU" if none.
std::string CpuModelFromCpuinfo(absl::string_view cpuinfo);

// MemTotal of /proc/meminfo text in GiB; 0 if absent.
double MemGibFromMeminfo(absl::string_view meminfo);

// The 1-minute load average in /proc/loadavg text ("0.52 0.58 0.59 ..."); -1
// if unreadable.
double LoadAverageFromProc(absl::string_view loadavg);

// This machine's 1-minute load average now; -1 if unreadable.
double LoadAverage();

// Reads this machine's hardware. With a "cuda" device among `devices`, GPU
// names come from /proc/driver/nvidia/gpus/*/information, else from
// `nvidia-smi --query-gpu=name`; "unknown GPU" when neither answers.
// Blocking (at most a few seconds when nvidia-smi runs).
Hardware ProbeHardware(const std::vector<std::string>& devices);

// One line: "2 cores (nproc), AMD EPYC 7B13, 23.4 GiB RAM; workers on cpu"
// or "...; workers on cuda: 1x NVIDIA H100 80GB HBM3".
std::string HardwareLine(const Hardware& hw);

// {"cores":2,"cpu_model":..,"mem_gib":..,"devices":[..],"gpus":[..],
//  "summary":HardwareLine}
nlohmann::json HardwareJson(const Hardware& hw);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_HARDWARE_H_
