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

}  // namespace
}  // namespace ringside
