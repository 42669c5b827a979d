#include "common/machine_cpu.h"

#include "common/stopwatch.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

TEST(MachineCpuTest, CountsABusyWaitAndNeverRunsBackwards) {
  absl::StatusOr<double> before = MachineBusySeconds();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(*before, 0);
  // 0.3 s of one core busy: at least 0.2 s counted at 10 ms ticks, whatever
  // else the machine does meanwhile.
  SpinFor(0.3);
  absl::StatusOr<double> after = MachineBusySeconds();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*after - *before, 0.2);
}

// The interrupts counted are a part of the busy time, and a busy wait in
// user space adds to the busy time outside them.
TEST(MachineCpuTest, InterruptTimeIsPartOfTheBusyTimeAndNotAUserBusyWait) {
  absl::StatusOr<double> busy_before = MachineBusySeconds();
  absl::StatusOr<double> irq_before = MachineInterruptSeconds();
  ASSERT_TRUE(busy_before.ok()) << busy_before.status();
  ASSERT_TRUE(irq_before.ok()) << irq_before.status();
  EXPECT_GE(*irq_before, 0);
  EXPECT_LE(*irq_before, *busy_before);
  SpinFor(0.3);
  absl::StatusOr<double> busy_after = MachineBusySeconds();
  absl::StatusOr<double> irq_after = MachineInterruptSeconds();
  ASSERT_TRUE(busy_after.ok() && irq_after.ok());
  const double busy = *busy_after - *busy_before;
  const double irq = *irq_after - *irq_before;
  EXPECT_GE(irq, 0);
  EXPECT_GE(busy - irq, 0.2);  // the wait, at 10 ms ticks
}

}  // namespace
}  // namespace ringside
