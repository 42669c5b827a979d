#include "common/machine_cpu.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

}  // namespace

absl::StatusOr<MachineCpuTimes> ParseProcStatCpuLine(absl::string_view line,
                                                     long ticks_per_second) {
  if (ticks_per_second <= 0) {
    return absl::InvalidArgumentError("machine CPU: no _SC_CLK_TCK");
  }
  std::istringstream fields{std::string(line)};
  std::string label;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
            softirq = 0, steal = 0;
  if (!(fields >> label >> user >> nice >> system >> idle >> iowait >> irq >>
        softirq) ||
      label != "cpu") {
    return absl::InvalidArgumentError(
        absl::StrCat("machine CPU: unexpected /proc/stat line '", line, "'"));
  }
  if (!(fields >> steal)) steal = 0;  // kernels before 2.6.11
  // Ticks divided by the rate (not times its reciprocal): each figure is
  // the correctly rounded seconds, the same double as any other reading
  // of those ticks.
  const auto seconds = [ticks_per_second](long long ticks) {
    return static_cast<double>(ticks) / static_cast<double>(ticks_per_second);
  };
  MachineCpuTimes t;
  t.busy_s = seconds(user + nice + system + irq + softirq);
  t.interrupt_s = seconds(irq + softirq);
  t.steal_s = seconds(steal);
  return t;
}

absl::StatusOr<MachineCpuTimes> ReadMachineCpuTimes() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::UnavailableError("machine CPU: cannot read /proc/stat");
  }
  absl::StatusOr<MachineCpuTimes> t =
      ParseProcStatCpuLine(line, sysconf(_SC_CLK_TCK));
  if (!t.ok()) return absl::UnavailableError(t.status().message());
  return t;
}

absl::StatusOr<double> MachineInterruptSeconds() {
  absl::StatusOr<MachineCpuTimes> t = ReadMachineCpuTimes();
  if (!t.ok()) return t.status();
  return t->interrupt_s;
}

double OwnCpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    if (getrusage(who, &u) == 0) {
      total += Seconds(u.ru_utime) + Seconds(u.ru_stime);
    }
  }
  return total;
}

absl::StatusOr<CpuSnapshot> TakeCpuSnapshot() {
  CpuSnapshot s;
  absl::StatusOr<MachineCpuTimes> machine = ReadMachineCpuTimes();
  if (!machine.ok()) return machine.status();
  s.machine = *machine;
  s.own_s = OwnCpuSeconds();
  s.at_s = NowSeconds();
  return s;
}

OtherCpuLoad OtherCpuBetween(const CpuSnapshot& before,
                             const CpuSnapshot& after) {
  OtherCpuLoad load;
  const double wall = after.at_s - before.at_s;
  const double tick =
      1.0 / static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  if (wall < tick) return load;
  const double machine = after.machine.busy_s - before.machine.busy_s;
  const double own = after.own_s - before.own_s;
  load.cores = std::max(0.0, machine - own) / wall;
  load.busy_cores = std::max(0.0, machine) / wall;
  load.steal_cores =
      std::max(0.0, after.machine.steal_s - before.machine.steal_s) / wall;
  return load;
}

}  // namespace ringside
