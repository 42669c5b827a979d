#include "common/machine_cpu.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/stopwatch.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

// /proc/stat's irq and softirq columns, in seconds, read here on their own.
double IrqAndSoftirqSeconds() {
  std::ifstream in("/proc/stat");
  std::string label;
  long long user, nice, system, idle, iowait, irq, softirq;
  in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  return static_cast<double>(irq + softirq) / sysconf(_SC_CLK_TCK);
}

// The reading is the irq and softirq columns (between two direct reads of
// them), never runs backwards, and a busy wait in user space is not in it.
TEST(MachineCpuTest, CountsTheInterruptColumnsAlone) {
  const double low = IrqAndSoftirqSeconds();
  absl::StatusOr<double> before = MachineInterruptSeconds();
  const double high = IrqAndSoftirqSeconds();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GE(*before, low);
  EXPECT_LE(*before, high);
  SpinFor(0.3);  // 0.3 s of user time
  const double spun_low = IrqAndSoftirqSeconds();
  absl::StatusOr<double> after = MachineInterruptSeconds();
  const double spun_high = IrqAndSoftirqSeconds();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*after, spun_low);
  EXPECT_LE(*after, spun_high);
  EXPECT_GE(*after, *before);
}

}  // namespace
}  // namespace ringside
