// --device / --gpus / --precision parsing, which models and devices
// compute in bf16, and the local-rank -> CUDA device mapping (plain C++:
// runs everywhere).
#include "worker/device_selection.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ringside {
namespace {

TEST(DeviceSelectionTest, ParsesDevices) {
  EXPECT_EQ(*ParseDevice("cpu"), Device::kCpu);
  EXPECT_EQ(*ParseDevice("cuda"), Device::kCuda);
  absl::StatusOr<Device> bad = ParseDevice("gpu");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("cpu or cuda"), std::string::npos);
  EXPECT_STREQ(DeviceName(Device::kCuda), "cuda");
  EXPECT_STREQ(DeviceName(Device::kCpu), "cpu");
}

TEST(DeviceSelectionTest, ParsesPrecisions) {
  EXPECT_EQ(*ParsePrecision("fp32"), Precision::kFp32);
  EXPECT_EQ(*ParsePrecision("bf16"), Precision::kBf16);
  for (const char* bad : {"fp16", "BF16", "", "float32"}) {
    absl::StatusOr<Precision> p = ParsePrecision(bad);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(p.status().message().find("fp32 or bf16"), std::string::npos)
        << p.status();
  }
  EXPECT_STREQ(PrecisionName(Precision::kBf16), "bf16");
  EXPECT_STREQ(PrecisionName(Precision::kFp32), "fp32");
}

// bf16 runs on CUDA workers; a CPU worker refuses it, saying what it
// lacks; fp32 runs everywhere. (Which models have bf16 arithmetic:
// model_factory_test.)
TEST(DeviceSelectionTest, Bf16NeedsACudaWorker) {
  EXPECT_TRUE(CheckPrecision(Precision::kBf16, Device::kCuda).ok());
  EXPECT_TRUE(CheckPrecision(Precision::kFp32, Device::kCpu).ok());
  EXPECT_TRUE(CheckPrecision(Precision::kFp32, Device::kCuda).ok());
  const absl::Status cpu = CheckPrecision(Precision::kBf16, Device::kCpu);
  EXPECT_EQ(cpu.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cpu.message().find("--precision=bf16 needs --device=cuda"),
            std::string::npos)
      << cpu;
}

TEST(DeviceSelectionTest, ParsesGpuLists) {
  EXPECT_TRUE(ParseGpuList("")->empty());
  EXPECT_EQ(*ParseGpuList("0"), std::vector<int>({0}));
  EXPECT_EQ(*ParseGpuList("3,1,0"), std::vector<int>({3, 1, 0}));
  for (const char* bad : {"a", "0,", "-1", "0,x", "1.5"}) {
    absl::StatusOr<std::vector<int>> gpus = ParseGpuList(bad);
    EXPECT_EQ(gpus.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(gpus.status().message().find("--gpus"), std::string::npos)
        << gpus.status();
  }
}

TEST(DeviceSelectionTest, DefaultIsLocalRankModuloDeviceCount) {
  EXPECT_EQ(*ChooseCudaDevice({}, 0, 4), 0);
  EXPECT_EQ(*ChooseCudaDevice({}, 3, 4), 3);
  EXPECT_EQ(*ChooseCudaDevice({}, 5, 4), 1);
  EXPECT_EQ(*ChooseCudaDevice({}, 2, 1), 0);  // PS workers share one GPU
}

TEST(DeviceSelectionTest, GpusMapLocalRanks) {
  EXPECT_EQ(*ChooseCudaDevice({2, 0}, 0, 4), 2);
  EXPECT_EQ(*ChooseCudaDevice({2, 0}, 1, 4), 0);
  EXPECT_EQ(*ChooseCudaDevice({0, 0}, 1, 1), 0);
}

TEST(DeviceSelectionTest, BadMappingsSayWhy) {
  absl::StatusOr<int> few = ChooseCudaDevice({0}, 1, 2);
  EXPECT_EQ(few.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(few.status().message().find("local rank 1"), std::string::npos)
      << few.status();
  absl::StatusOr<int> missing = ChooseCudaDevice({3}, 0, 2);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("sees 2 device(s)"),
            std::string::npos)
      << missing.status();
  EXPECT_FALSE(ChooseCudaDevice({}, 0, 0).ok());
  EXPECT_FALSE(ChooseCudaDevice({}, -1, 2).ok());
}

TEST(DeviceSelectionTest, LocalRankFromLauncherEnvironment) {
  unsetenv("LOCAL_RANK");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("SLURM_LOCALID");
  EXPECT_EQ(LocalRankFromEnv(5), 5);  // one host: the rank
  setenv("SLURM_LOCALID", "2", 1);
  EXPECT_EQ(LocalRankFromEnv(5), 2);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  EXPECT_EQ(LocalRankFromEnv(5), 1);
  setenv("LOCAL_RANK", "0", 1);
  EXPECT_EQ(LocalRankFromEnv(5), 0);
  setenv("LOCAL_RANK", "x", 1);  // not a number: the next one
  EXPECT_EQ(LocalRankFromEnv(5), 1);
  unsetenv("LOCAL_RANK");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("SLURM_LOCALID");
}

}  // namespace
}  // namespace ringside
