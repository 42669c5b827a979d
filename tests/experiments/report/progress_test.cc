#include "experiments/report/progress.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

TEST(ProgressTest, FormatClock) {
  EXPECT_EQ(FormatClock(0), "00:00");
  EXPECT_EQ(FormatClock(42.4), "00:42");
  EXPECT_EQ(FormatClock(59.6), "01:00");
  EXPECT_EQ(FormatClock(725), "12:05");
  EXPECT_EQ(FormatClock(3599.4), "59:59");
  EXPECT_EQ(FormatClock(3723), "1:02:03");
  EXPECT_EQ(FormatClock(-1), "--:--");
  EXPECT_EQ(FormatClock(NAN), "--:--");
  EXPECT_EQ(FormatClock(INFINITY), "--:--");
}

TEST(ProgressTest, EtaIsTheMeanTimesWhatIsLeft) {
  EXPECT_FALSE(EtaSeconds(9, {}).has_value());
  EXPECT_DOUBLE_EQ(*EtaSeconds(9, {10, 20}), 15.0 * 7);
  EXPECT_DOUBLE_EQ(*EtaSeconds(2, {10, 20}), 0.0);
}

TEST(ProgressTest, ProgressLine) {
  EXPECT_EQ(ProgressLine(1, 9, "baseline n=1", {}),
            "[1/9] baseline n=1, ETA --:--");
  EXPECT_EQ(ProgressLine(3, 9, "ring n=2", {5, 7}),
            "[3/9] ring n=2, ETA 00:42");
  EXPECT_EQ(ProgressLine(9, 9, "dps n=4, 4 servers", std::vector<double>(8, 1)),
            "[9/9] dps n=4, 4 servers, ETA 00:01");
}

}  // namespace
}  // namespace ringside
