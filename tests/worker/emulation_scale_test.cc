// ScaleByteThresholdFlags: every byte-valued strategy flag divided by S,
// given or default, 0 kept, at least one unit, fusion's a multiple of 4;
// a scale below 1 refused.
#include "worker/emulation_scale.h"

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(int64_t, ring_bucket_kb);
ABSL_DECLARE_FLAG(int64_t, ring_first_bucket_kb);
ABSL_DECLARE_FLAG(int64_t, chunk_kb);
ABSL_DECLARE_FLAG(int64_t, zero3_unit_kb);
ABSL_DECLARE_FLAG(int64_t, fusion_threshold_bytes);

namespace ringside {
namespace {

TEST(EmulationScaleTest, DividesEveryByteThresholdByTheScale) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_ring_bucket_kb, 25600);  // DDP's 25 MiB
  absl::SetFlag(&FLAGS_ring_first_bucket_kb, 1024);
  absl::SetFlag(&FLAGS_chunk_kb, 0);  // automatic: stays
  absl::SetFlag(&FLAGS_zero3_unit_kb, 4096);
  absl::SetFlag(&FLAGS_fusion_threshold_bytes, int64_t{64} << 20);
  ASSERT_TRUE(ScaleByteThresholdFlags(64).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_bucket_kb), 400);
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_first_bucket_kb), 16);
  EXPECT_EQ(absl::GetFlag(FLAGS_chunk_kb), 0);
  EXPECT_EQ(absl::GetFlag(FLAGS_zero3_unit_kb), 64);
  EXPECT_EQ(absl::GetFlag(FLAGS_fusion_threshold_bytes), int64_t{1} << 20);
}

TEST(EmulationScaleTest, SmallValuesKeepOneUnitAndFusionAMultipleOfFour) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_ring_first_bucket_kb, 3);
  absl::SetFlag(&FLAGS_fusion_threshold_bytes, 1000);
  ASSERT_TRUE(ScaleByteThresholdFlags(7).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_first_bucket_kb), 1);  // not 0 (off)
  EXPECT_EQ(absl::GetFlag(FLAGS_fusion_threshold_bytes), 140);  // 143 → 140
  absl::SetFlag(&FLAGS_fusion_threshold_bytes, 8);
  ASSERT_TRUE(ScaleByteThresholdFlags(100).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_fusion_threshold_bytes), 4);
}

// Only the flags the chosen strategy reads: the others keep their values.
TEST(EmulationScaleTest, OnlyTheFlagsTheStrategyReads) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_ring_bucket_kb, 25600);
  absl::SetFlag(&FLAGS_fusion_threshold_bytes, int64_t{64} << 20);
  ASSERT_TRUE(ScaleByteThresholdFlags(64, [](const std::string& flag) {
                return flag == "ring_bucket_kb";
              }).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_bucket_kb), 400);
  EXPECT_EQ(absl::GetFlag(FLAGS_fusion_threshold_bytes), int64_t{64} << 20);
}

TEST(EmulationScaleTest, ScaleOneChangesNothingAndBelowOneIsRefused) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_ring_bucket_kb, 25600);
  ASSERT_TRUE(ScaleByteThresholdFlags(1).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_bucket_kb), 25600);
  for (const double bad : {0.5, 0.0, -2.0, std::nan("")}) {
    const absl::Status s = ScaleByteThresholdFlags(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("--emulation_scale"), std::string::npos);
  }
  EXPECT_EQ(absl::GetFlag(FLAGS_ring_bucket_kb), 25600);
}

}  // namespace
}  // namespace ringside
