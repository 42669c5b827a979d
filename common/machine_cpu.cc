#include "common/machine_cpu.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace ringside {

absl::StatusOr<double> MachineInterruptSeconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::UnavailableError("machine CPU: cannot read /proc/stat");
  }
  // "cpu user nice system idle iowait irq softirq steal ..." (ticks).
  std::istringstream fields(line);
  std::string label;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
            softirq = 0;
  if (!(fields >> label >> user >> nice >> system >> idle >> iowait >> irq >>
        softirq) ||
      label != "cpu") {
    return absl::UnavailableError(
        absl::StrCat("machine CPU: unexpected /proc/stat line '", line, "'"));
  }
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) {
    return absl::UnavailableError("machine CPU: no _SC_CLK_TCK");
  }
  return static_cast<double>(irq + softirq) /
         static_cast<double>(ticks_per_second);
}

}  // namespace ringside
