// RoundToBf16 (models/precision.h): round to nearest, ties to even, at
// bfloat16's 8 significand bits; exact on values bfloat16 holds; NaN,
// infinities and signed zeros kept; a relative error of at most 2^-8 (half
// a unit in the last of 8 significand bits).
#include "models/precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace ringside {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

TEST(PrecisionTest, RoundsToNearestTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to 1 (even).
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f), 1.0f);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even
  // 1 + 2^-6.
  EXPECT_EQ(RoundToBf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  // Just above the halfway point rounds up, just below rounds down.
  EXPECT_EQ(RoundToBf16(FromBits(Bits(1.0f + 0x1p-8f) + 1)), 1.0f + 0x1p-7f);
  EXPECT_EQ(RoundToBf16(FromBits(Bits(1.0f + 0x1p-8f) - 1)), 1.0f);
  EXPECT_EQ(RoundToBf16(-(1.0f + 0x1p-8f)), -1.0f);
}

TEST(PrecisionTest, KeepsRepresentableAndSpecialValues) {
  for (float v : {0.0f, 1.0f, -2.5f, 0x1p-100f, 3.0f * 0x1p90f}) {
    EXPECT_EQ(RoundToBf16(v), v) << v;
  }
  EXPECT_TRUE(std::signbit(RoundToBf16(-0.0f)));
  EXPECT_EQ(RoundToBf16(std::numeric_limits<float>::infinity()),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(RoundToBf16(-std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(RoundToBf16(std::nanf(""))));
  // The largest float rounds past bfloat16's largest finite value.
  EXPECT_TRUE(std::isinf(RoundToBf16(std::numeric_limits<float>::max())));
}

TEST(PrecisionTest, RelativeErrorAtMostHalfAnUlp) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  std::vector<float> in(10000), out(in.size());
  for (float& v : in) v = normal(rng);
  RoundToBf16(in, absl::MakeSpan(out));
  int changed = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i], RoundToBf16(in[i]));
    // The low 16 bits are gone.
    EXPECT_EQ(Bits(out[i]) & 0xFFFFu, 0u) << in[i];
    EXPECT_LE(std::abs(out[i] - in[i]), 0x1p-8f * std::abs(in[i])) << in[i];
    changed += out[i] != in[i];
  }
  EXPECT_GT(changed, 9900);
  // In place.
  std::vector<float> same = in;
  RoundToBf16(same, absl::MakeSpan(same));
  EXPECT_EQ(same, out);
}

}  // namespace
}  // namespace ringside
