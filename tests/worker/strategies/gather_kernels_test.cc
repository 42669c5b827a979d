// The all-gather hooks' kernels on hand-worked parts: top-k's selection
// (ties in index order, a NaN the largest, k = size), sign's packing (the
// L1 scale, the bits, the error kept) and unpacking.
#include "worker/strategies/allreduce/gather_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ringside {
namespace {

std::vector<std::pair<int, float>> Pairs(const std::vector<float>& out) {
  std::vector<std::pair<int, float>> pairs;
  for (size_t i = 0; i < out.size(); i += 2) {
    pairs.emplace_back(FloatAsIndex(out[i]), out[i + 1]);
  }
  return pairs;
}

TEST(GatherKernelsTest, SelectTopKTakesTheLargestMagnitudesInIndexOrder) {
  const std::vector<float> values = {0.5f, -3.0f, 2.0f, -2.0f, 1.0f};
  std::vector<float> magnitude, out(6);
  // k = 3 at bucket offset 10: |−3| first, then the tie at 2 in index
  // order.
  SelectTopK(values.data(), 10, 5, 3, magnitude, out.data());
  const std::vector<std::pair<int, float>> want = {
      {11, -3.0f}, {12, 2.0f}, {13, -2.0f}};
  EXPECT_EQ(Pairs(out), want);
  // k = 2: the tie is broken by index.
  out.assign(4, 0);
  SelectTopK(values.data(), 0, 5, 2, magnitude, out.data());
  const std::vector<std::pair<int, float>> two = {{1, -3.0f}, {2, 2.0f}};
  EXPECT_EQ(Pairs(out), two);
  // A NaN counts as the largest; k >= size takes every element.
  const std::vector<float> nan = {1.0f, std::nanf(""), 3.0f};
  out.assign(2, 0);
  SelectTopK(nan.data(), 0, 3, 1, magnitude, out.data());
  EXPECT_EQ(FloatAsIndex(out[0]), 1);
  EXPECT_TRUE(std::isnan(out[1]));
  out.assign(6, 0);
  SelectTopK(values.data(), 0, 3, 5, magnitude, out.data());
  const std::vector<std::pair<int, float>> all = {
      {0, 0.5f}, {1, -3.0f}, {2, 2.0f}};
  EXPECT_EQ(Pairs(out), all);
}

TEST(GatherKernelsTest, PackSignsKeepsTheErrorAndAddSignsUnpacks) {
  // 33 elements: two words of bits. g = +1 at even i, −3 at odd; e = 0.
  std::vector<float> g(33), e(33, 0.0f), words(SignWords(33));
  for (int i = 0; i < 33; ++i) g[i] = i % 2 == 0 ? 1.0f : -3.0f;
  ASSERT_EQ(words.size(), 3u);
  PackSigns(g.data(), 33, e.data(), words.data());
  // s = ‖e‖₁/33 = (17 · 1 + 16 · 3)/33 = 65/33.
  const float s = static_cast<float>(65.0 / 33.0);
  EXPECT_FLOAT_EQ(words[0], s);
  EXPECT_EQ(FloatAsBits(words[1]), 0x55555555u);  // even bits set
  EXPECT_EQ(FloatAsBits(words[2]), 0x1u);         // element 32 (even)
  EXPECT_FLOAT_EQ(e[0], 1.0f - s);
  EXPECT_FLOAT_EQ(e[1], -3.0f + s);
  // Two ranks' messages added: the same here, 2 · s · sign.
  std::vector<float> out(33, 0.0f);
  AddSigns(words.data(), 33, out.data());
  AddSigns(words.data(), 33, out.data());
  EXPECT_FLOAT_EQ(out[0], 2 * s);
  EXPECT_FLOAT_EQ(out[1], -2 * s);
  EXPECT_FLOAT_EQ(out[32], 2 * s);
}

}  // namespace
}  // namespace ringside
