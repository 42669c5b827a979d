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

// The parsed line in seconds: busy = user + nice + system + irq + softirq,
// idle and iowait left out, steal on its own; a line without steal (old
// kernels) has none; another label or too few fields is refused.
TEST(MachineCpuTest, ParsesTheFirstProcStatLine) {
  absl::StatusOr<MachineCpuTimes> t =
      ParseProcStatCpuLine("cpu  100 20 30 5000 70 4 6 50 0 0", 100);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_DOUBLE_EQ(t->busy_s, 1.6);
  EXPECT_DOUBLE_EQ(t->interrupt_s, 0.1);
  EXPECT_DOUBLE_EQ(t->steal_s, 0.5);
  absl::StatusOr<MachineCpuTimes> old =
      ParseProcStatCpuLine("cpu 100 20 30 5000 70 4 6", 100);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_DOUBLE_EQ(old->steal_s, 0);
  EXPECT_FALSE(ParseProcStatCpuLine("cpu0 1 2 3 4 5 6 7 8", 100).ok());
  EXPECT_FALSE(ParseProcStatCpuLine("cpu 1 2 3", 100).ok());
  EXPECT_FALSE(ParseProcStatCpuLine("cpu 1 2 3 4 5 6 7 8", 0).ok());
}

// Others' load is the machine's busy time less this process's, over the
// wall time, never negative; the hypervisor's steal apart.
TEST(MachineCpuTest, OthersAreTheMachineLessThisProcess) {
  CpuSnapshot before, after;
  before.machine = {10.0, 0.0, 1.0};
  before.own_s = 1.0;
  before.at_s = 100.0;
  after.machine = {13.0, 0.0, 1.5};
  after.own_s = 2.0;
  after.at_s = 102.0;
  const OtherCpuLoad load = OtherCpuBetween(before, after);
  EXPECT_DOUBLE_EQ(load.cores, 1.0);
  EXPECT_DOUBLE_EQ(load.steal_cores, 0.25);
  EXPECT_DOUBLE_EQ(load.busy_cores, 1.5);  // 3 s of busy cores in 2 s
  after.own_s = 9.0;  // more than the machine counted (tick rounding)
  EXPECT_DOUBLE_EQ(OtherCpuBetween(before, after).cores, 0.0);
  EXPECT_DOUBLE_EQ(OtherCpuBetween(before, before).cores, 0.0);
}

// CPU this process burns shows in its own seconds and in the machine's
// busy seconds alike (so it is not counted as others').
TEST(MachineCpuTest, OwnSpinIsCountedOnBothSides) {
  absl::StatusOr<CpuSnapshot> before = TakeCpuSnapshot();
  ASSERT_TRUE(before.ok()) << before.status();
  const Stopwatch clock;
  while (OwnCpuSeconds() - before->own_s < 0.3 && clock.ElapsedSeconds() < 20) {
    SpinFor(0.01);
  }
  absl::StatusOr<CpuSnapshot> after = TakeCpuSnapshot();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(after->own_s - before->own_s, 0.3);
  // The machine counts at least what this process used, less a tick of
  // rounding on each side.
  EXPECT_GE(after->machine.busy_s - before->machine.busy_s, 0.3 - 0.05);
  EXPECT_GT(after->at_s, before->at_s);
}

}  // namespace
}  // namespace ringside
