// TensorShards: each rank's share of a tensor, the bytes outside this
// rank's pieces, and giving back exactly the pages wholly outside the
// pieces inside one tensor, for the contiguous plan and the per-unit one.
#include "worker/strategies/sharded/tensor_shards.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace ringside {
namespace {

// a: 3000 floats, b: 5000, c: 1000 (9000 in all); two ranks' shards of
// 4000 and 5000 floats: rank 0 owns [0, 4000), rank 1 [4000, 9000).
TensorLayout Layout() {
  absl::StatusOr<TensorLayout> layout =
      TensorLayout::FromShapes({{"a", {3000}}, {"b", {5000}}, {"c", {1000}}});
  EXPECT_TRUE(layout.ok()) << layout.status();
  return *layout;
}

TEST(TensorShardsTest, SharesAndOutsideBytes) {
  const TensorShards rank0(Layout(), {4000, 5000}, 0);
  EXPECT_EQ(rank0.CountsWithin(rank0.RangeOf(0)),
            (std::vector<int64_t>{3000, 0}));
  EXPECT_EQ(rank0.CountsWithin(rank0.RangeOf(1)),
            (std::vector<int64_t>{1000, 4000}));
  EXPECT_EQ(rank0.CountsWithin(rank0.RangeOf(2)),
            (std::vector<int64_t>{0, 1000}));
  EXPECT_EQ(rank0.OutsideBytes(rank0.RangeOf(0)), 0);
  EXPECT_EQ(rank0.OutsideBytes(rank0.RangeOf(1)), 4 * 4000);
  EXPECT_EQ(rank0.OutsideBytes(rank0.RangeOf(2)), 4 * 1000);
  const TensorShards rank1(Layout(), {4000, 5000}, 1);
  EXPECT_EQ(rank1.OutsideBytes(rank1.RangeOf(0)), 4 * 3000);
  EXPECT_EQ(rank1.OutsideBytes(rank1.RangeOf(1)), 4 * 1000);
  EXPECT_EQ(rank1.OutsideBytes(rank1.RangeOf(2)), 0);
}

TEST(TensorShardsTest, ReleaseZeroesOnlyWholePagesOfTheTensorOutsideTheShard) {
  const TensorLayout layout = Layout();
  const TensorShards rank0(layout, {4000, 5000}, 0);
  // A page-aligned anonymous mapping, as the large buffers are.
  const size_t bytes = layout.total_bytes();
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  absl::Span<float> buffer(static_cast<float*>(mem), layout.total_elements());
  for (float& x : buffer) x = 1.0f;
  rank0.Release(buffer, 1);  // b: outside rank 0's shard is [4000, 8000)
  // The shard and the other tensors are untouched.
  for (int64_t i = 0; i < 4000; ++i) ASSERT_EQ(buffer[i], 1.0f) << i;
  for (int64_t i = 8000; i < 9000; ++i) ASSERT_EQ(buffer[i], 1.0f) << i;
  // b's part outside the shard is bytes [16000, 32000) of the buffer: the
  // pages wholly inside it are zeroed, the two it shares are not.
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t first = (16000 + page - 1) / page * page;
  const int64_t last = 32000 / page * page;
  for (int64_t i = 4000; i < 8000; ++i) {
    const bool whole_page = 4 * i >= first && 4 * i < last;
    ASSERT_EQ(buffer[i], whole_page ? 0.0f : 1.0f) << i;
  }
  EXPECT_GT(last, first);  // something was given back
  munmap(mem, bytes);
}

TEST(TensorShardsTest, EvenCountsDifferByAtMostOneLongerFirst) {
  EXPECT_EQ(EvenCounts(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(EvenCounts(2, 3), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(EvenCounts(9, 1), (std::vector<int64_t>{9}));
}

// Per unit (each tensor a unit): every rank holds a piece of every tensor,
// so each tensor's collectives send (n-1)/n of it from every rank.
TEST(TensorShardsTest, PerUnitPlanCutsEveryTensorEvenly) {
  const TensorLayout layout = Layout();
  const ShardPlan plan =
      PerUnitShardPlan({{0, 3000}, {3000, 8000}, {8000, 9000}}, 3);
  const TensorShards rank1(layout, plan, 1);
  EXPECT_EQ(rank1.CountsWithin(rank1.RangeOf(0)),
            (std::vector<int64_t>{1000, 1000, 1000}));
  EXPECT_EQ(rank1.CountsWithin(rank1.RangeOf(1)),
            (std::vector<int64_t>{1667, 1667, 1666}));
  EXPECT_EQ(rank1.pieces(),
            (std::vector<KeyRange>{{1000, 2000}, {4667, 6334}, {8334, 8667}}));
  EXPECT_EQ(rank1.owned_elements(), 1000 + 1667 + 333);
  EXPECT_EQ(rank1.OutsideBytes(rank1.RangeOf(1)), 4 * (5000 - 1667));
  EXPECT_EQ(rank1.OutsideBytes({0, 9000}), 4 * (9000 - 3000));
  // A range inside a unit; none across units.
  EXPECT_EQ(rank1.CountsWithin({3500, 5000}),
            (std::vector<int64_t>{1167, 333, 0}));
  EXPECT_TRUE(rank1.CountsWithin({2000, 4000}).empty());
  // Releasing the whole buffer keeps exactly the pages of the pieces.
  const size_t bytes = layout.total_bytes();
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  absl::Span<float> buffer(static_cast<float*>(mem), layout.total_elements());
  for (float& x : buffer) x = 1.0f;
  rank1.Release(buffer, KeyRange{0, 9000});
  const int64_t page_floats = sysconf(_SC_PAGESIZE) / 4;
  int64_t zeroed = 0;
  for (int64_t i = 0; i < 9000; ++i) {
    bool mine = false;
    for (const KeyRange& p : rank1.pieces()) mine |= i >= p.begin && i < p.end;
    if (mine) {
      ASSERT_EQ(buffer[i], 1.0f) << i;
    }
    zeroed += buffer[i] == 0.0f;
  }
  // Most of the 6000 floats outside the pieces went (all but the pages a
  // piece shares).
  EXPECT_GE(zeroed, 6000 - 6 * page_floats);
  munmap(mem, bytes);
}

}  // namespace
}  // namespace ringside
