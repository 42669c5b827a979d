#include "experiments/report/hardware.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(HardwareTest, CpuModelFromCpuinfo) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                "model name\t: AMD EPYC 7B13\nflags\t: x\n"
                                "processor\t: 1\nmodel name\t: other\n"),
            "AMD EPYC 7B13");
  EXPECT_EQ(CpuModelFromCpuinfo("processor : 0\nHardware : BCM2835\n"),
            "BCM2835");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "unknown CPU");
}

TEST(HardwareTest, MemGib) {
  EXPECT_DOUBLE_EQ(
      MemGibFromMeminfo("MemTotal:       2097152 kB\nMemFree: 1 kB"), 2.0);
  EXPECT_EQ(MemGibFromMeminfo("nothing"), 0);
}

TEST(HardwareTest, LoadAverage) {
  EXPECT_DOUBLE_EQ(LoadAverageFromProc("16.83 20.52 21.56 3/612 30652\n"),
                   16.83);
  EXPECT_EQ(LoadAverageFromProc(""), -1);
  EXPECT_GE(LoadAverage(), 0);
}

TEST(HardwareTest, Lines) {
  Hardware hw;
  hw.cores = 2;
  hw.cpu_model = "AMD EPYC";
  hw.mem_gib = 23.44;
  hw.devices = {"cpu"};
  EXPECT_EQ(HardwareLine(hw),
            "2 cores (nproc), AMD EPYC, 23.4 GiB RAM; "
            "workers on cpu");
  hw.devices = {"cuda"};
  hw.gpus = {"NVIDIA H100", "NVIDIA H100"};
  EXPECT_EQ(HardwareLine(hw),
            "2 cores (nproc), AMD EPYC, 23.4 GiB RAM; "
            "workers on cuda: 2x NVIDIA H100");
  EXPECT_EQ(HardwareJson(hw)["gpus"].size(), 2u);
}

TEST(HardwareTest, ProbeThisMachine) {
  const Hardware hw = ProbeHardware({"cpu"});
  EXPECT_GT(hw.cores, 0);
  EXPECT_FALSE(hw.cpu_model.empty());
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_THAT(HardwareLine(hw), HasSubstr("cores (nproc)"));
}

}  // namespace
}  // namespace ringside
